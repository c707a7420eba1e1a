// The router: #/PAGE/ARGS… shows a page in main; what a page starts
// (a stream, a timer) is stopped when another is shown (onLeave).
import { errorBox, main, showBanner } from './dom.js';

let cleanup = [];
let routes = {};

// onLeave runs fn when the page shown now is left.
export function onLeave(fn) {
  cleanup.push(fn);
}

// setRoutes names the pages: { name: async (args) => … }.
export function setRoutes(r) {
  routes = r;
}

// route shows the page the location's hash names (the first one by
// default), again when called from a page.
export async function route() {
  cleanup.forEach((f) => f());
  cleanup = [];
  showBanner('');
  const first = Object.keys(routes)[0];
  const parts = (location.hash.replace(/^#\/?/, '') || first).split('/');
  const page = routes[parts[0]] ? parts[0] : first;
  document.querySelectorAll('nav a').forEach((a) => {
    if (a.dataset.nav === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  main.replaceChildren();
  try {
    await routes[page](parts.slice(1).map(decodeURIComponent));
  } catch (e) {
    main.append(errorBox(e));
  }
  document.title = `Quarry · ${page[0].toUpperCase()}${page.slice(1)}`;
}
