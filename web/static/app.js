// Quarry's browser UI. Everything here goes through the public HTTP API
// under /v1 and its event streams; nothing is private to the UI. Each
// page is a module; there is nothing to build.
import { askPage } from './ask.js';
import { consolePage } from './console.js';
import { knowledgePage } from './knowledge.js';
import { researchPage } from './research.js';
import { route, setRoutes } from './router.js';

setRoutes({ research: researchPage, ask: askPage, console: consolePage, knowledge: knowledgePage });
window.addEventListener('hashchange', route);
// In-page anchors of a report (#ref-3) scroll; they are not routes.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[href^="#"]');
  if (!a || a.getAttribute('href').startsWith('#/')) return;
  const target = document.getElementById(a.getAttribute('href').slice(1));
  if (target) {
    ev.preventDefault();
    target.scrollIntoView({ block: 'center' });
    target.focus && target.setAttribute('tabindex', '-1');
    target.focus();
  }
});

route();
