// DOM helpers: elements built from strings as text, never as HTML; the
// page's main region and banner; a form field with its error line.
import { APIError } from './api.js';

export const main = document.getElementById('main');
const banner = document.getElementById('banner');

// ---- small DOM helper: strings become text, never HTML ----
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
export const fmt = (n, d = 3) => (typeof n === 'number' ? n.toFixed(d) : '');
let uid = 0;
export const id = (p) => `${p}-${++uid}`;

export function field(label, control, help) {
  const cid = control.id || (control.id = id('f'));
  const err = h('p', { class: 'field-error', id: cid + '-err', 'aria-live': 'polite' });
  control.setAttribute('aria-describedby', cid + '-err');
  return {
    el: h(
      'div',
      {},
      h('label', { for: cid }, label),
      control,
      help ? h('p', { class: 'field-help' }, help) : null,
      err,
    ),
    err,
  };
}

export function showBanner(text) {
  banner.hidden = !text;
  banner.textContent = text || '';
}
export function errorBox(e) {
  return h(
    'p',
    { class: 'error', role: 'alert' },
    e instanceof APIError ? `${e.message}${e.field ? ` (${e.field})` : ''}` : String(e.message || e),
  );
}
export function statusBadge(s) {
  return h('span', { class: `status ${s}` }, s);
}

// table is a table that scrolls on its own on a narrow screen: a header
// row of headings (text, or <th> elements) over body (a <tbody>).
export function table(headings, body) {
  const head = h(
    'tr',
    {},
    headings.map((c) => (c instanceof Node ? c : h('th', {}, c))),
  );
  return h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, head), body));
}
