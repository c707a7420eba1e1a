// Quarry's browser UI. Everything here goes through the public HTTP API
// under /v1 and its event streams; nothing is private to the UI.

const main = document.getElementById('main');
const banner = document.getElementById('banner');

// ---- small DOM helper: strings become text, never HTML ----
function h(tag, attrs = {}, ...children) {
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
const fmt = (n, d = 3) => (typeof n === 'number' ? n.toFixed(d) : '');
let uid = 0;
const id = (p) => `${p}-${++uid}`;

function field(label, control, help) {
  const cid = control.id || (control.id = id('f'));
  const err = h('p', { class: 'field-error', id: cid + '-err', 'aria-live': 'polite' });
  control.setAttribute('aria-describedby', cid + '-err');
  return { el: h('div', {}, h('label', { for: cid }, label), control, help ? h('p', { class: 'field-help' }, help) : null, err), err };
}

// ---- API: the token lives in sessionStorage (this tab only) ----
const tokenKey = 'quarry.token';
class APIError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status; this.code = e.code; this.field = e.field; this.body = body;
  }
}
function authHeaders(extra = {}) {
  const t = sessionStorage.getItem(tokenKey);
  return t ? { ...extra, Authorization: `Bearer ${t}` } : extra;
}
async function api(method, path, body, opts = {}) {
  for (;;) {
    const init = { method, headers: authHeaders(opts.headers || {}) };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) { init.body = JSON.stringify(body); init.headers['Content-Type'] = 'application/json'; }
    const r = await fetch(path, init);
    if (r.status === 401) { await askToken(); continue; }
    if (r.status === 204) return null;
    const ct = r.headers.get('Content-Type') || '';
    const data = ct.includes('json') ? await r.json() : await r.text();
    if (!r.ok) throw new APIError(r.status, data);
    return data;
  }
}
let tokenWait = null;
function askToken() {
  if (tokenWait) return tokenWait;
  const dlg = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  const err = document.getElementById('token-error');
  sessionStorage.removeItem(tokenKey);
  tokenWait = new Promise((resolve) => {
    document.getElementById('token-form').onsubmit = async (ev) => {
      ev.preventDefault();
      const t = input.value.trim();
      const r = await fetch('/v1/knowledge-bases', { headers: { Authorization: `Bearer ${t}` } });
      if (r.status === 401) { err.hidden = false; err.textContent = 'That token is not valid (revoked or mistyped).'; return; }
      sessionStorage.setItem(tokenKey, t);
      input.value = ''; err.hidden = true; dlg.close(); tokenWait = null; resolve();
    };
  });
  dlg.showModal();
  return tokenWait;
}

// ---- Server-Sent Events over fetch (headers allowed) ----
// readEvents calls onEvent(event, data, id) for each event of a response
// until the stream ends or onEvent returns true.
async function readEvents(r, onEvent) {
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i); buf = buf.slice(i + 2);
      let ev = 'message', data = '', seq = null, hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) ev = line.slice(6).trim();
        else if (line.startsWith('data:')) { data += line.slice(5).trim(); hasData = true; }
        else if (line.startsWith('id:')) seq = Number(line.slice(3).trim());
      }
      if (!hasData) continue; // "retry:" and ": keep-alive" blocks are not events
      if (onEvent(ev, data, seq)) { reader.cancel().catch(() => {}); return; }
    }
  }
}

// follow reads a research's events, resuming from the last seq.
function follow(path, { after = 0, onEvent, onEnd, onState }) {
  let last = after, stopped = false, ctrl = null, wait = 500;
  async function once() {
    ctrl = new AbortController();
    const r = await fetch(`${path}?after=${last}`, { headers: authHeaders({ Accept: 'text/event-stream' }), signal: ctrl.signal });
    if (r.status === 401) { await askToken(); return; }
    if (r.status === 204) { stopped = true; onEnd && onEnd(); return; }
    if (!r.ok) throw new APIError(r.status, await r.json().catch(() => null));
    onState && onState('live'); wait = 500;
    await readEvents(r, (ev, data, seq) => {
      if (ev === 'end') { stopped = true; onEnd && onEnd(); return true; }
      if (ev === 'reconnect') return true;
      if (seq !== null) {
        if (seq <= last) return false; // never twice
        last = seq;
      }
      try { onEvent(ev, JSON.parse(data), seq); } catch (e) { console.error(e); }
      return false;
    });
  }
  (async () => {
    while (!stopped) {
      try { await once(); } catch (e) { if (stopped || e.name === 'AbortError') return; }
      if (stopped) return;
      onState && onState('reconnecting');
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 5000);
    }
  })();
  return { stop() { stopped = true; ctrl && ctrl.abort(); }, get last() { return last; } };
}

function showBanner(text) { banner.hidden = !text; banner.textContent = text || ''; }
function errorBox(e) { return h('p', { class: 'error', role: 'alert' }, e instanceof APIError ? `${e.message}${e.field ? ` (${e.field})` : ''}` : String(e.message || e)); }
function statusBadge(s) { return h('span', { class: `status ${s}` }, s); }

// ---- router ----
let cleanup = [];
const routes = { research: researchPage, ask: askPage, console: consolePage, knowledge: knowledgePage };
async function route() {
  cleanup.forEach((f) => f()); cleanup = [];
  showBanner('');
  const parts = (location.hash.replace(/^#\/?/, '') || 'research').split('/');
  const page = routes[parts[0]] ? parts[0] : 'research';
  document.querySelectorAll('nav a').forEach((a) => {
    if (a.dataset.nav === page) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  });
  main.replaceChildren();
  try { await routes[page](parts.slice(1).map(decodeURIComponent)); } catch (e) { main.append(errorBox(e)); }
  document.title = `Quarry · ${page[0].toUpperCase()}${page.slice(1)}`;
}
window.addEventListener('hashchange', route);
// In-page anchors of a report (#ref-3) scroll; they are not routes.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[href^="#"]');
  if (!a || a.getAttribute('href').startsWith('#/')) return;
  const target = document.getElementById(a.getAttribute('href').slice(1));
  if (target) { ev.preventDefault(); target.scrollIntoView({ block: 'center' }); target.focus && target.setAttribute('tabindex', '-1'); target.focus(); }
});

// ---- Research ----
async function researchPage(args) {
  if (args[0] === 'thread' && args[1]) return threadDetail(args[1]);
  if (args[0]) return researchDetail(args[0]);
  const kbs = (await api('GET', '/v1/knowledge-bases')).items || [];
  const q = h('textarea', { id: 'question', name: 'question', required: true, maxlength: 2000 });
  const level = h('select', { id: 'level' }, ['quick', 'standard', 'comprehensive'].map((l) => h('option', { value: l, selected: l === 'standard' }, l)));
  // The knowledge base made last is the one a user most likely means.
  const newest = kbs.reduce((a, k) => (a && a.id > k.id ? a : k), null);
  const srcBoxes = [...kbs.map((k) => `kb:${k.name}`), 'web', 'arxiv', 'wikipedia'].map((s) =>
    h('label', { class: 'chip' }, h('input', { type: 'checkbox', value: s, checked: !!newest && s === `kb:${newest.name}` }), ' ', s));
  const err = h('div');
  const qf = field('Question', q);
  // Breadth and depth replace the level; budgets bound any research.
  const adv = {
    breadth: field('Breadth', h('input', { id: 'breadth', type: 'number', min: 1, max: 20, placeholder: '5' }), 'sub-questions per round, 1-20; with depth, replaces the level'),
    depth: field('Depth', h('input', { id: 'depth', type: 'number', min: 0, max: 5, placeholder: '2' }), 'follow-up rounds, 0-5; with breadth, replaces the level'),
    max_tokens: field('Token budget', h('input', { id: 'max-tokens', type: 'number', min: 0, step: 1000, placeholder: 'no limit' }), 'model tokens in all; the research stops and says so when they run out'),
    timeout: field('Time budget', h('input', { id: 'timeout', type: 'text', placeholder: 'e.g. 90s or 5m' }), 'a duration'),
  };
  const levelField = field('Level', level, 'quick: 2 sub-questions, 1 round; standard: 4 and 2; comprehensive: 6 and 3');
  const form = h('form', { class: 'stack panel', onsubmit: async (ev) => {
    ev.preventDefault(); err.replaceChildren();
    for (const f of [qf, levelField, ...Object.values(adv)]) f.err.textContent = '';
    const sources = srcBoxes.map((l) => l.querySelector('input')).filter((c) => c.checked).map((c) => c.value);
    const body = { question: q.value, sources };
    const v = Object.fromEntries(Object.entries(adv).map(([k, f]) => [k, f.el.querySelector('input').value]));
    if (v.breadth === '' && v.depth === '') body.level = level.value;
    for (const k of ['breadth', 'depth', 'max_tokens']) if (v[k] !== '') body[k] = Number(v[k]);
    if (v.timeout !== '') body.timeout = v.timeout.trim();
    try {
      const r = await api('POST', '/v1/researches', body);
      location.hash = `#/research/${r.id}`;
    } catch (e) {
      const fields = { question: qf, level: levelField, ...adv }; // the API names fields as the body does
      const target = Object.hasOwn(fields, e.field || '') ? fields[e.field] : null;
      if (target) target.err.textContent = e.message; else err.append(errorBox(e));
    }
  } },
  h('h1', {}, 'Research'), qf.el,
  h('fieldset', { class: 'stack' }, h('legend', {}, 'Sources'), h('div', { class: 'chips' }, srcBoxes)),
  levelField.el,
  h('details', {}, h('summary', {}, 'Breadth, depth and budgets'), h('div', { class: 'row' }, ...Object.values(adv).map((f) => f.el))),
  err, h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Start research')));
  const list = h('tbody');
  main.append(form, h('h2', {}, 'Recent researches'), h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Question'), h('th', {}, 'Status'), h('th', {}, 'Created'))), list)));
  const refresh = async () => {
    const rs = (await api('GET', '/v1/researches?limit=20')).items || [];
    list.replaceChildren(...rs.map((r) => h('tr', {}, h('td', {}, h('a', { href: `#/research/${r.id}` }, r.question)), h('td', {}, statusBadge(r.status)), h('td', {}, new Date(r.created_at).toLocaleString()))));
    if (!rs.length) list.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'No researches yet.')));
  };
  const threads = h('tbody');
  main.append(h('h2', {}, 'Threads'), h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Thread'), h('th', {}, 'Status'), h('th', {}, 'Last activity'))), threads)));
  const refreshThreads = async () => {
    const ts = (await api('GET', '/v1/threads?limit=20')).items || [];
    threads.replaceChildren(...ts.map((th) => h('tr', {}, h('td', {}, h('a', { href: `#/research/thread/${th.id}` }, th.title)), h('td', {}, statusBadge(th.status)), h('td', {}, new Date(th.last_activity).toLocaleString()))));
    if (!ts.length) threads.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'No threads yet.')));
  };
  await Promise.all([refresh(), refreshThreads()]);
  // Researches started elsewhere (the CLI, another browser) appear here.
  const t = setInterval(() => { refresh().catch(() => {}); refreshThreads().catch(() => {}); }, 5000);
  cleanup.push(() => clearInterval(t));
}

async function threadDetail(tid) {
  let th;
  try { th = await api('GET', `/v1/threads/${encodeURIComponent(tid)}`); } catch (e) {
    if (e.status === 404) { main.append(h('h1', {}, 'Thread not found'), h('p', {}, h('a', { href: '#/research' }, 'All researches'))); return; }
    throw e;
  }
  main.append(h('p', {}, h('a', { href: '#/research' }, '← All researches')), h('h1', {}, th.title), h('p', {}, statusBadge(th.status)),
    h('ol', { class: 'messages' }, th.queries.map((q) => h('li', { class: 'msg' },
      h('div', { class: 'meta' }, statusBadge(q.status), ' ', new Date(q.created_at).toLocaleString()),
      h('p', {}, h('a', { href: `#/research/${q.research_id}` }, q.question)),
      q.answer ? h('p', {}, q.answer) : null))),
    th.status === 'closed' ? h('p', { class: 'muted' }, 'This thread is closed.') : h('button', { type: 'button', onclick: async () => { await api('POST', `/v1/threads/${tid}/close`); route(); } }, 'Close thread'));
}

async function researchDetail(rid) {
  let r;
  try { r = await api('GET', `/v1/researches/${encodeURIComponent(rid)}`); } catch (e) {
    if (e.status === 404) { main.append(h('h1', {}, 'Research not found'), h('p', {}, `There is no research with the id ${rid}. `, h('a', { href: '#/research' }, 'Start one'), '.')); return; }
    throw e;
  }
  const status = h('span', {}, statusBadge(r.status));
  const stage = h('span', { class: 'muted' }, r.stage || '');
  const agents = h('div', { class: 'agents', 'aria-live': 'polite' });
  const agentEls = {};
  const log = h('ol', { class: 'log', 'aria-label': 'Message log', tabindex: 0 });
  const sources = h('ol', { class: 'log', 'aria-label': 'Sources read', tabindex: 0 });
  const usage = h('p', { class: 'muted' });
  const report = h('article', { class: 'report', 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'The report appears here when it is written.'));
  const actions = h('div', { class: 'row' });
  const showUsage = (u, t) => { if (u) usage.textContent = `${u.llm_calls || 0} model calls · ${(u.input_tokens || 0) + (u.output_tokens || 0)} tokens${t?.total_seconds ? ` · ${fmt(t.total_seconds, 1)} s` : ''}`; };
  // Facts and the conflicts among them, apart from the report's prose.
  const facts = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Facts are checked across sources when the research has read them.'));
  function showFacts(res) {
    const fs = res.facts || [], ds = res.discrepancies || [];
    if (!fs.length && !ds.length) return;
    const verified = fs.filter((f) => f.verified).length;
    facts.replaceChildren(h('p', {}, `${fs.length} facts, ${verified} verified by two or more independent sources; ${ds.length} ${ds.length === 1 ? 'conflict' : 'conflicts'}.`),
      ds.length ? h('ul', { class: 'conflicts' }, ds.map((d) => h('li', {}, h('strong', {}, d.topic), h('br'), d.resolution,
        h('span', { class: 'muted' }, ` (${d.strategy}, confidence ${fmt(d.confidence, 2)})`)))) : '');
  }
  function setAgent(a) {
    let el = agentEls[a.agent];
    if (!el) {
      el = agentEls[a.agent] = { bar: h('progress', { max: 1, value: 0, 'aria-label': `${a.agent} progress` }), st: h('span'), task: h('span', { class: 'muted' }) };
      agents.append(h('div', { class: 'agent' }, h('div', { class: 'agent-head' }, h('strong', {}, a.agent), el.st), el.bar, el.task));
    }
    el.bar.value = a.progress || 0; el.st.replaceChildren(statusBadge(a.status)); el.task.textContent = a.error || a.task || a.result || '';
  }
  async function loadReport() {
    const html = await api('GET', `/v1/researches/${rid}/report?format=html`);
    const tpl = document.createElement('template');
    tpl.innerHTML = html; // sanitised by the server's allow-list
    report.replaceChildren(tpl.content); report.setAttribute('aria-busy', 'false');
    try {
      const ck = await api('GET', `/v1/researches/${rid}/check`);
      report.append(h('p', { class: 'muted' }, `Citation check: ${ck.supported} of ${ck.cited_passages} cited passages supported by their sources (${ck.method}).`));
    } catch { /* a report without checks */ }
  }
  function renderActions(cur) {
    actions.replaceChildren();
    if (cur === 'pending' || cur === 'processing') actions.append(h('button', { type: 'button', onclick: async () => { try { await api('POST', `/v1/researches/${rid}/cancel`); } catch (e) { actions.append(errorBox(e)); } } }, 'Cancel'));
    if (cur === 'failed' || cur === 'canceled') actions.append(h('button', { type: 'button', onclick: async () => { await api('POST', `/v1/researches/${rid}/resume`); route(); } }, 'Resume'));
    if (cur === 'completed') for (const f of ['md', 'json', 'html']) actions.append(h('button', { type: 'button', onclick: () => download(rid, f) }, `Export ${f.toUpperCase()}`));
  }
  main.append(h('p', {}, h('a', { href: '#/research' }, '← All researches')), h('h1', {}, r.question),
    h('p', {}, status, ' ', stage, r.thread_id ? h('a', { href: `#/research/thread/${r.thread_id}` }, ` · thread ${r.thread_id.slice(0, 8)}`) : ''), actions,
    h('div', { class: 'grid' },
      h('section', { 'aria-labelledby': 'rep-h' }, h('h2', { id: 'rep-h' }, 'Report'), report, followUp(r)),
      h('aside', {}, h('section', { class: 'panel' }, h('h2', {}, 'Agents'), agents, usage),
        h('section', { class: 'panel', 'aria-labelledby': 'facts-h' }, h('h2', { id: 'facts-h' }, 'Facts and conflicts'), facts),
        h('section', { class: 'panel' }, h('h2', {}, 'Sources'), sources),
        h('section', { class: 'panel' }, h('h2', {}, 'Messages'), log))));
  renderActions(r.status);
  showUsage(r.usage, r.timings);
  showFacts(r);
  if (r.status === 'completed') await loadReport();
  const stream = follow(`/v1/researches/${rid}/events`, {
    onEvent(type, e) {
      if (e.status) { status.replaceChildren(statusBadge(e.status.status)); stage.textContent = e.status.stage; renderActions(e.status.status); }
      if (e.agent) setAgent(e.agent);
      if (e.message) log.append(h('li', {}, h('strong', {}, e.message.from), `: ${e.message.content}`));
      if (e.warning) log.append(h('li', { class: 'error' }, e.warning));
      if (e.source) sources.append(h('li', {}, h('a', { href: e.source.url, rel: 'noopener noreferrer', target: '_blank' }, e.source.title || e.source.url), h('span', { class: 'muted' }, ` ${e.source.domain || ''}`)));
      if (e.usage) showUsage(e.usage);
      log.scrollTop = log.scrollHeight;
    },
    async onEnd() {
      showBanner('');
      let now = await api('GET', `/v1/researches/${rid}`);
      for (let i = 0; i < 20 && (now.status === 'pending' || now.status === 'processing'); i++) {
        await new Promise((r) => setTimeout(r, 250)); // the stream ended before the row was read back
        now = await api('GET', `/v1/researches/${rid}`);
      }
      status.replaceChildren(statusBadge(now.status)); renderActions(now.status); showUsage(now.usage, now.timings); showFacts(now);
      if (now.status === 'completed') await loadReport();
      else if (now.error) {
        report.replaceChildren(h('p', { class: 'error', role: 'alert' }, `${now.status}: ${now.error}`));
        report.setAttribute('aria-busy', 'false');
      }
    },
    onState(s) { showBanner(s === 'reconnecting' ? 'Connection lost — reconnecting; nothing is missed.' : ''); },
  });
  cleanup.push(() => stream.stop());
}

function followUp(r) {
  if (!r.thread_id) return null;
  const q = h('input', { id: 'followup', type: 'text', maxlength: 2000 });
  const f = field('Ask a follow-up in this thread', q);
  return h('form', { class: 'stack panel', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const n = await api('POST', `/v1/threads/${r.thread_id}/researches`, { question: q.value, level: r.options?.level || 'standard' });
      location.hash = `#/research/${n.id}`;
    } catch (e) { f.err.textContent = e.message; }
  } }, f.el, h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Ask follow-up')));
}

async function download(rid, format) {
  const r = await fetch(`/v1/researches/${rid}/report?format=${format}`, { headers: authHeaders() });
  const blob = await r.blob();
  const a = h('a', { href: URL.createObjectURL(blob), download: `research-${rid.slice(0, 8)}.${format}` });
  document.body.append(a); a.click(); a.remove();
}

// ---- Ask ----
async function askPage() {
  const kbs = (await api('GET', '/v1/knowledge-bases')).items || [];
  main.append(h('h1', {}, 'Ask'));
  if (!kbs.length) { main.append(h('p', {}, 'No knowledge base yet: ', h('a', { href: '#/knowledge' }, 'add one'), '.')); return; }
  const kb = h('select', { id: 'ask-kb' }, kbs.map((k) => h('option', { value: k.name }, k.name)));
  const q = h('input', { id: 'ask-q', type: 'text', maxlength: 2000, required: true, autocomplete: 'off' });
  const messages = h('div', { class: 'messages', 'aria-live': 'polite' });
  const qf = field('Question (Korean or English)', q);
  const sessKey = () => `quarry.session.${kb.value}`;
  async function ask(text) {
    messages.append(h('div', { class: 'msg user' }, h('div', { class: 'meta' }, 'You'), text));
    const body = { question: text };
    const sid = sessionStorage.getItem(sessKey());
    if (sid) body.session_id = sid;
    try {
      const a = await api('POST', `/v1/knowledge-bases/${encodeURIComponent(kb.value)}/ask`, body);
      sessionStorage.setItem(sessKey(), a.session_id);
      messages.append(answerEl(a, ask));
    } catch (e) {
      if (e.status === 404 && /expired/.test(e.message)) {
        sessionStorage.removeItem(sessKey());
        messages.append(h('p', { class: 'error', role: 'alert' }, 'The conversation expired after 30 minutes without a question; a new one starts with your next question.'));
      } else messages.append(errorBox(e));
    }
  }
  async function restore() {
    messages.replaceChildren();
    const sid = sessionStorage.getItem(sessKey());
    if (!sid) return;
    try {
      const s = await api('GET', `/v1/sessions/${sid}`);
      for (const m of s.messages) messages.append(m.role === 'user' ? h('div', { class: 'msg user' }, h('div', { class: 'meta' }, 'You'), m.content)
        : answerEl({ answer: m.content, sources: m.sources || [], confidence: m.confidence_score, suggestions: m.suggested_questions || [] }, ask));
    } catch (e) {
      sessionStorage.removeItem(sessKey());
      if (/expired/.test(e.message)) messages.append(h('p', { class: 'muted' }, 'The earlier conversation expired; ask to start a new one.'));
    }
  }
  kb.addEventListener('change', restore);
  main.append(h('div', { class: 'row' }, field('Knowledge base', kb).el), messages,
    h('form', { class: 'stack', onsubmit: (ev) => { ev.preventDefault(); const t = q.value.trim(); if (!t) { qf.err.textContent = 'Type a question.'; return; } qf.err.textContent = ''; q.value = ''; ask(t); } },
      qf.el, h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Ask'),
        h('button', { type: 'button', onclick: async () => { const sid = sessionStorage.getItem(sessKey()); if (sid) await api('DELETE', `/v1/sessions/${sid}`).catch(() => {}); sessionStorage.removeItem(sessKey()); messages.replaceChildren(); } }, 'New conversation'))));
  await restore();
}

function answerEl(a, ask) {
  return h('div', { class: 'msg' },
    h('div', { class: 'meta' }, 'Quarry', typeof a.confidence === 'number' ? ` · confidence ${fmt(a.confidence, 2)}` : '', a.unknown ? ' · does not know' : ''),
    h('p', {}, a.answer),
    a.sources && a.sources.length ? h('ul', { 'aria-label': 'Sources' }, a.sources.map((s) => h('li', {}, s.startsWith('http') ? h('a', { href: s, rel: 'noopener noreferrer', target: '_blank' }, s) : s))) : null,
    a.suggestions && a.suggestions.length ? h('div', { class: 'chips', 'aria-label': 'Suggested questions' }, a.suggestions.map((s) => h('button', { type: 'button', class: 'chip', onclick: () => ask(s) }, s))) : null,
    a.note ? h('p', { class: 'muted' }, a.note) : null);
}

// ---- Console ----
const seedRules = {
  temperature: (v) => (v < 0 || v > 1 ? 'Temperature must be between 0.0 and 1.0' : ''),
  max_tokens: (v) => (v < 100 || v > 4000 ? 'Max tokens must be between 100 and 4000' : ''),
  top_p: (v) => (v < 0 || v > 1 ? 'Top P must be between 0.0 and 1.0' : ''),
  top_k: (v) => (v < 1 || v > 20 ? 'Top K must be between 1 and 20' : ''),
  query: (v) => (v.trim().length < 1 || v.length > 10000 ? 'Query must be 1-10000 characters' : ''),
};

async function consolePage() {
  const [ps, ds] = await Promise.all([api('GET', '/v1/pipelines'), api('GET', '/v1/datasets')]);
  main.append(h('h1', {}, 'Console'));
  const dsSel = h('select', { id: 'c-ds' }, h('option', { value: '' }, 'any dataset'), ds.datasets.map((d) => h('option', { value: d.id }, d.name)));
  const typeSel = h('select', { id: 'c-type' }, ['', 'normal', 'test'].map((t) => h('option', { value: t }, t || 'any type')));
  const pSel = h('select', { id: 'c-pipeline' });
  const fill = (list) => pSel.replaceChildren(...list.map((p) => h('option', { value: p.id }, `${p.name} (${p.pipeline_type}, ${p.settings.mode}, top ${p.settings.top_k})`)));
  fill(ps.pipelines);
  const refilter = async () => {
    const qs = new URLSearchParams(); if (dsSel.value) qs.set('dataset_id', dsSel.value); if (typeSel.value) qs.set('pipeline_type', typeSel.value);
    fill((await api('GET', `/v1/pipelines?${qs}`)).pipelines);
  };
  dsSel.addEventListener('change', refilter); typeSel.addEventListener('change', refilter);
  if (!ps.pipelines.length) { main.append(h('p', {}, 'No pipeline yet: create one with ', h('code', {}, 'quarry pipeline create NAME --kb KB'), ' or POST /v1/pipelines.')); return; }
  const panels = { retrieve: retrieveTab(pSel), generate: generateTab(pSel), evaluate: evaluateTab(ps.pipelines, ds.datasets) };
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const body = h('div', { role: 'tabpanel' });
  for (const [name, panel] of Object.entries(panels)) {
    tabs.append(h('button', { type: 'button', role: 'tab', id: `tab-${name}`, 'aria-selected': name === 'retrieve' ? 'true' : 'false', onclick: (ev) => {
      tabs.querySelectorAll('button').forEach((b) => b.setAttribute('aria-selected', 'false'));
      ev.target.setAttribute('aria-selected', 'true'); body.replaceChildren(panel); body.setAttribute('aria-labelledby', ev.target.id);
    } }, name[0].toUpperCase() + name.slice(1)));
  }
  body.append(panels.retrieve); body.setAttribute('aria-labelledby', 'tab-retrieve');
  main.append(h('div', { class: 'row panel' }, field('Dataset', dsSel).el, field('Type', typeSel).el, field('Pipeline', pSel).el), tabs, body);
}

function chunkTable(chunks) {
  return h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'Score'), h('th', {}, 'Source'), h('th', {}, 'Golden'), h('th', {}, 'Content'))),
    h('tbody', {}, chunks.map((c, i) => h('tr', {}, h('td', {}, i + 1), h('td', {}, fmt(c.score)), h('td', {}, c.datasource_id),
      h('td', {}, c.is_golden === undefined ? '—' : c.is_golden ? h('span', { class: 'golden' }, 'golden') : 'no'), h('td', {}, c.content.slice(0, 400)))))));
}

function retrieveTab(pSel) {
  const q = h('textarea', { id: 'r-q' }); const k = h('input', { id: 'r-k', type: 'number', value: 5, min: 1, max: 20 });
  const qf = field('Query', q), kf = field('Top K', k);
  const out = h('div', { 'aria-live': 'polite' });
  return h('form', { class: 'stack', onsubmit: async (ev) => {
    ev.preventDefault(); qf.err.textContent = seedRules.query(q.value); kf.err.textContent = seedRules.top_k(Number(k.value));
    if (qf.err.textContent || kf.err.textContent) return;
    out.replaceChildren(h('p', { class: 'muted' }, 'Retrieving…'));
    try {
      const r = await api('POST', `/v1/pipelines/${pSel.value}/retrieve`, { query: q.value, top_k: Number(k.value) });
      out.replaceChildren(h('p', {}, `${r.chunks.length} chunks · retrieval_time ${fmt(r.retrieval_time, 4)} s`), chunkTable(r.chunks));
    } catch (e) { out.replaceChildren(errorBox(e)); }
  } }, qf.el, kf.el, h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Retrieve')), out);
}

function generateTab(pSel) {
  const type = h('select', { id: 'g-type' }, ['vllm', 'claude', 'openai', 'ollama'].map((t) => h('option', { value: t }, t)));
  const name = h('input', { id: 'g-model', type: 'text', required: true });
  const endpoint = h('input', { id: 'g-endpoint', type: 'url', placeholder: 'http://localhost:8000/v1' });
  const key = h('input', { id: 'g-key', type: 'password', autocomplete: 'off' });
  const temp = h('input', { id: 'g-temp', type: 'number', step: '0.1', value: 0.7 });
  const maxT = h('input', { id: 'g-max', type: 'number', value: 1000 });
  const topP = h('input', { id: 'g-topp', type: 'number', step: '0.05', value: 0.9 });
  const q = h('textarea', { id: 'g-q' });
  const f = { type: field('Model type', type), name: field('Model name', name), endpoint: field('Endpoint', endpoint, 'Required for vLLM'), key: field('API key', key, 'Claude keys start with sk-ant-; sent with this request only'),
    temp: field('Temperature', temp), maxT: field('Max tokens', maxT), topP: field('Top P', topP), q: field('Query', q) };
  const messages = h('div', { class: 'messages', 'aria-live': 'polite' });
  let chat = null;
  const check = () => {
    f.temp.err.textContent = seedRules.temperature(Number(temp.value));
    f.maxT.err.textContent = seedRules.max_tokens(Number(maxT.value));
    f.topP.err.textContent = seedRules.top_p(Number(topP.value));
    f.q.err.textContent = seedRules.query(q.value);
    f.key.err.textContent = type.value === 'claude' && !key.value.startsWith('sk-ant-') ? 'Invalid Claude API key format' : '';
    f.endpoint.err.textContent = type.value === 'vllm' && !/^https?:\/\/.+/.test(endpoint.value) ? 'Invalid vLLM endpoint URL' : '';
    f.name.err.textContent = name.value.trim() ? '' : 'model_name is required';
    return !Object.values(f).some((x) => x.err.textContent);
  };
  for (const c of [type, temp, maxT, topP, key, endpoint]) c.addEventListener('input', check);
  return h('form', { class: 'stack', onsubmit: async (ev) => {
    ev.preventDefault(); if (!check()) return;
    if (chat && chat.n >= 50) { messages.append(h('p', { class: 'error', role: 'alert' }, 'Chat session has reached maximum message limit')); return; }
    const text = q.value; q.value = '';
    messages.append(h('div', { class: 'msg user' }, h('div', { class: 'meta' }, 'You'), text));
    const ans = h('p'); const meta = h('div', { class: 'meta' }, 'Model · generating…'); const box = h('div', { class: 'msg' }, meta, ans);
    messages.append(box);
    const body = { query: text, model_config: { type: type.value, model_name: name.value, api_key: key.value || undefined, endpoint: endpoint.value || undefined,
      parameters: { temperature: Number(temp.value), max_tokens: Number(maxT.value), top_p: Number(topP.value) } }, chat_id: chat ? chat.id : 'new' };
    try {
      const r = await fetch(`/v1/pipelines/${pSel.value}/generate`, { method: 'POST', headers: authHeaders({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }), body: JSON.stringify(body) });
      if (!r.ok) throw new APIError(r.status, await r.json().catch(() => null));
      await readEvents(r, (ev, raw) => {
        const data = JSON.parse(raw || 'null');
        if (ev === 'delta') ans.textContent += data.text;
        if (ev === 'answer') {
          ans.textContent = data.answer; chat = { id: data.chat_id, n: data.chat_messages };
          meta.textContent = `${data.model} · ${data.tokens_used} tokens · retrieval ${fmt(data.retrieval_time)} s · model ${fmt(data.llm_time)} s · total ${fmt(data.generation_time)} s`;
          box.append(h('details', {}, h('summary', {}, `${data.sources.length} sources`), chunkTable(data.sources)));
        }
        if (ev === 'error') { meta.textContent = 'Model error'; ans.replaceChildren(errorBox(new APIError(data.status, data))); }
        return false;
      });
    } catch (e) { meta.textContent = 'Error'; ans.replaceChildren(errorBox(e)); }
  } }, h('div', { class: 'row' }, f.type.el, f.name.el, f.endpoint.el, f.key.el), h('div', { class: 'row' }, f.temp.el, f.maxT.el, f.topP.el), messages, f.q.el,
  h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Generate'),
    h('button', { type: 'button', onclick: async () => { if (chat && chat.id) await api('DELETE', `/v1/sessions/${chat.id}`).catch(() => {}); chat = null; messages.replaceChildren(); } }, 'Clear chat')));
}

// chart draws the pipelines' scores side by side, one group per metric,
// as SVG (values 0-1); the table beside it carries the same numbers.
function chart(metrics, runs, k) {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 640, H = 240, left = 34, bottom = 28, top = 10;
  const gw = (W - left) / metrics.length, bw = Math.min(32, (gw - 16) / runs.length);
  const el = (name, attrs, ...kids) => { const e = document.createElementNS(NS, name); for (const [a, v] of Object.entries(attrs)) e.setAttribute(a, v); e.append(...kids); return e; };
  const y = (v) => top + (1 - v) * (H - top - bottom);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
    'aria-label': `Scores at k=${k}: ` + metrics.map(([label, key]) => `${label} ` + runs.map((r) => `${r.pipeline} ${fmt(r.overall[key], 3)}`).join(', ')).join('; ') });
  for (const v of [0, 0.5, 1]) svg.append(el('line', { x1: left, x2: W, y1: y(v), y2: y(v), class: 'grid' }), el('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, String(v)));
  metrics.forEach(([label, key], i) => {
    const x0 = left + i * gw + (gw - bw * runs.length) / 2;
    runs.forEach((r, j) => {
      const v = Math.max(0, Math.min(1, Number(r.overall[key]) || 0));
      svg.append(el('rect', { x: x0 + j * bw, y: y(v), width: bw - 2, height: y(0) - y(v), class: `series-${j % 4}` }, el('title', {}, `${r.pipeline}: ${label}@${k} ${fmt(r.overall[key], 4)}`)));
    });
    svg.append(el('text', { x: left + i * gw + gw / 2, y: H - 8, 'text-anchor': 'middle' }, label));
  });
  const legend = h('ul', { class: 'legend' }, runs.map((r, j) => h('li', {}, h('span', { class: `swatch series-${j % 4}`, 'aria-hidden': 'true' }), r.pipeline)));
  return h('figure', { class: 'chart-wrap' }, svg, legend);
}

function evaluateTab(pipelines, datasets) {
  const boxes = pipelines.map((p) => h('label', { class: 'chip' }, h('input', { type: 'checkbox', value: p.id }), ' ', p.name));
  const ds = h('select', { id: 'e-ds' }, datasets.map((d) => h('option', { value: d.id }, d.name)));
  const k = h('input', { id: 'e-k', type: 'number', value: 10, min: 1, max: 100 });
  const out = h('div', { 'aria-live': 'polite' });
  return h('form', { class: 'stack', onsubmit: async (ev) => {
    ev.preventDefault();
    const chosen = boxes.map((b) => b.querySelector('input')).filter((c) => c.checked).map((c) => c.value);
    if (!chosen.length) { out.replaceChildren(h('p', { class: 'error' }, 'Pick at least one pipeline.')); return; }
    out.replaceChildren(h('p', { class: 'muted' }, 'Evaluating…'));
    try {
      const c = await api('POST', '/v1/evaluations', { pipelines: chosen, dataset: ds.value, k: Number(k.value) });
      const metrics = [['nDCG', 'ndcg'], ['Recall', 'recall'], ['Precision', 'precision'], ['MRR', 'mrr'], ['Hit rate', 'hit_rate']];
      out.replaceChildren(h('p', {}, `${c.dataset}, k=${c.k}, ${c.runs[0].overall.queries} questions`), chart(metrics, c.runs, c.k),
        h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Metric'), c.runs.map((r) => h('th', {}, r.pipeline)))),
          h('tbody', {}, metrics.map(([label, key]) => h('tr', {}, h('th', { scope: 'row' }, `${label}@${c.k}`), c.runs.map((r) => h('td', {},
            h('div', { class: 'bar', 'data-w': r.overall[key] }), fmt(r.overall[key], 4)))))))),
        ...c.differences.map((d) => h('p', {}, `${d.pipeline} vs ${d.baseline}: nDCG ${d.ndcg >= 0 ? '+' : ''}${fmt(d.ndcg, 4)}, better on ${d.better} questions, worse on ${d.worse}`)));
      out.querySelectorAll('.bar').forEach((b) => { b.style.width = `${Math.round(Number(b.dataset.w) * 100)}%`; });
    } catch (e) { out.replaceChildren(errorBox(e)); }
  } }, h('fieldset', {}, h('legend', {}, 'Pipelines'), h('div', { class: 'chips' }, boxes)), h('div', { class: 'row' }, field('Dataset', ds).el, field('k', k).el),
  h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Evaluate')), out);
}

// ---- Knowledge ----
async function knowledgePage(args) {
  const kbs = (await api('GET', '/v1/knowledge-bases')).items || [];
  main.append(h('h1', {}, 'Knowledge'));
  const name = h('input', { id: 'kb-name', type: 'text', required: true, pattern: '[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}', maxlength: 64 });
  const nf = field('New knowledge base', name);
  const kbBody = h('tbody');
  const showKBs = (list) => kbBody.replaceChildren(...list.map((k) => h('tr', {},
    h('td', {}, h('a', { href: `#/knowledge/${encodeURIComponent(k.name)}` }, k.name)),
    h('td', {}, k.sources), h('td', {}, k.chunks), h('td', {}, k.stale))));
  const refreshKBs = async () => showKBs((await api('GET', '/v1/knowledge-bases')).items || []);
  showKBs(kbs);
  const head = h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Sources'), h('th', {}, 'Chunks'), h('th', {}, 'Stale')));
  main.append(h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, head, kbBody)),
  h('form', { class: 'row panel', onsubmit: async (ev) => {
    ev.preventDefault();
    try { await api('POST', '/v1/knowledge-bases', { name: name.value }); location.hash = `#/knowledge/${encodeURIComponent(name.value)}`; } catch (e) { nf.err.textContent = e.message; }
  } }, nf.el, h('button', { type: 'submit' }, 'Create')));
  const kb = args[0] || (kbs[0] && kbs[0].name);
  if (kb) await kbDetail(kb, refreshKBs);
}

async function kbDetail(name, refreshKBs = async () => {}) {
  const base = `/v1/knowledge-bases/${encodeURIComponent(name)}`;
  const out = h('div', { 'aria-live': 'polite' });
  const q = h('input', { id: 'kb-q', type: 'search' });
  const mode = h('select', { id: 'kb-mode' }, ['hybrid', 'bm25', 'vector'].map((m) => h('option', { value: m }, m)));
  const lang = h('select', { id: 'kb-lang' }, ['', 'en', 'ko'].map((m) => h('option', { value: m }, m || 'any language')));
  const k = h('input', { id: 'kb-k', type: 'number', value: 5, min: 1, max: 100 });
  const stale = h('input', { id: 'kb-stale', type: 'checkbox' });
  const results = h('div', { 'aria-live': 'polite' });
  const search = h('form', { class: 'stack panel', onsubmit: async (ev) => {
    ev.preventDefault();
    const qs = new URLSearchParams({ q: q.value, k: k.value, mode: mode.value }); if (lang.value) qs.set('lang', lang.value); if (stale.checked) qs.set('include_stale', 'true');
    try {
      const r = await api('GET', `${base}/search?${qs}`);
      results.replaceChildren(h('ol', { class: 'results' }, (r.items || []).map((x) => h('li', {}, h('strong', {}, x.title || x.source_url), ` (${fmt(x.score)}) `, h('span', { class: 'muted' }, x.source_url), h('p', {}, x.text.slice(0, 300))))));
    } catch (e) { results.replaceChildren(errorBox(e)); }
  } }, h('h2', {}, `Search ${name}`), h('div', { class: 'row' }, field('Query', q).el, field('Mode', mode).el, field('Language', lang).el, field('Results', k).el),
  h('label', { class: 'check' }, stale, 'Include stale pages'), h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'kb-search' }, 'Search')), results);

  const files = h('input', { id: 'kb-files', type: 'file', multiple: true });
  const drop = h('div', { class: 'drop' }, 'Drop files here, or ', h('label', { for: 'kb-files', class: 'auto' }, 'choose them'), files);
  const upload = async (list) => {
    const fd = new FormData(); for (const f of list) fd.append('file', f);
    out.replaceChildren(h('p', { class: 'muted' }, `Uploading ${list.length} files…`));
    try {
      const r = await api('POST', `${base}/documents`, fd);
      if (r.status === 'running') { out.replaceChildren(h('p', {}, 'A large upload is being ingested in the background.')); return; }
      const rep = r.report || r;
      refreshSources().catch(() => {}); refreshKBs().catch(() => {});
      out.replaceChildren(h('p', {}, `Added ${rep.added}, updated ${rep.updated}, unchanged ${rep.unchanged}: ${rep.chunks} chunks.`),
        (rep.failed || []).length ? h('ul', { 'aria-label': 'Files not added' }, rep.failed.map((p) => h('li', { class: 'error' }, `${p.origin}: ${p.reason}`))) : null);
    } catch (e) { out.replaceChildren(errorBox(e)); }
  };
  files.addEventListener('change', () => upload(files.files));
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => { ev.preventDefault(); drop.classList.remove('over'); upload(ev.dataTransfer.files); });

  const url = h('input', { id: 'kb-url', type: 'url', placeholder: 'https://docs.example.com/' });
  const uf = field('Crawl a site', url);
  const logs = h('tbody');
  const refreshLogs = async () => {
    const r = await api('GET', `${base}/crawls`);
    logs.replaceChildren(...(r.items || []).map((l) => h('tr', {}, h('td', {}, l.url), h('td', {}, statusBadge(l.status)), h('td', {}, l.pages_crawled), h('td', {}, l.pages_updated), h('td', {}, l.pages_failed), h('td', {}, l.error_message || ''))));
  };
  // The re-crawl schedule is stored with the knowledge base; whichever
  // server or worker runs jobs on this store crawls it on time.
  const every = h('input', { id: 'kb-every', type: 'text', value: '5m', size: 8, 'aria-describedby': 'kb-schedule' });
  const ef = field('Re-crawl every', every);
  const schedInfo = h('p', { class: 'muted', id: 'kb-schedule', 'aria-live': 'polite' });
  const refreshSchedule = async () => {
    try {
      const sc = await api('GET', `${base}/schedule`);
      schedInfo.textContent = `Re-crawls ${sc.url} every ${sc.every}; next run due ${new Date(sc.next_at).toLocaleString()}.`;
    } catch (e) { schedInfo.textContent = e.status === 404 ? 'No scheduled re-crawl.' : e.message; }
  };
  const setSchedule = async () => {
    try { await api('PUT', `${base}/schedule`, { url: url.value, every: every.value }); ef.err.textContent = ''; await refreshSchedule(); } catch (e) { ef.err.textContent = e.message; }
  };
  const removeSchedule = async () => {
    try { await api('DELETE', `${base}/schedule`); ef.err.textContent = ''; await refreshSchedule(); } catch (e) { ef.err.textContent = e.message; }
  };
  const crawl = h('form', { class: 'stack panel', onsubmit: async (ev) => {
    ev.preventDefault();
    try { await api('POST', `${base}/crawls`, { url: url.value }); uf.err.textContent = ''; await refreshLogs(); } catch (e) { uf.err.textContent = e.message; }
  } }, uf.el, h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Start crawl')),
  h('div', { class: 'row' }, ef.el, h('button', { type: 'button', id: 'kb-schedule-set', onclick: setSchedule }, 'Schedule re-crawl'),
    h('button', { type: 'button', id: 'kb-schedule-off', onclick: removeSchedule }, 'Remove schedule')), schedInfo,
  h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, h('tr', {}, ['URL', 'Status', 'Crawled', 'Updated', 'Failed', 'Error'].map((c) => h('th', {}, c)))), logs)));
  const staleOnly = h('input', { id: 'kb-stale-only', type: 'checkbox' });
  const srcBody = h('tbody');
  const chunkPanel = h('div', { 'aria-live': 'polite' });
  // A source's chunks, 100 at a time: a long file has thousands.
  const showChunks = async (x) => {
    const list = h('ol', { class: 'chunks' });
    const head = h('h3', {});
    const more = h('button', { type: 'button', class: 'more-chunks', hidden: true }, 'More chunks');
    const page = async () => {
      const shown = list.children.length;
      const r = await api('GET', `${base}/chunks?source=${encodeURIComponent(x.url)}&limit=100&offset=${shown}`);
      list.append(...r.items.map((c) => h('li', {}, h('span', { class: 'muted' }, `#${c.chunk_index} · ${c.tokens} tokens · ${c.language}`), h('p', {}, c.text))));
      head.textContent = `${r.total} chunks of ${x.title || x.url}${r.total > list.children.length ? `, the first ${list.children.length} shown` : ''}`;
      more.hidden = list.children.length >= r.total || r.items.length === 0;
    };
    more.addEventListener('click', () => page().catch((e) => chunkPanel.append(errorBox(e))));
    try {
      await page();
      chunkPanel.replaceChildren(head, list, more);
    } catch (e) { chunkPanel.replaceChildren(errorBox(e)); }
  };
  const srcTotal = h('p', { class: 'muted' });
  const refreshSources = async () => {
    const r = await api('GET', `${base}/sources?limit=200${staleOnly.checked ? '&stale=true' : ''}`);
    srcTotal.textContent = `${r.total} ${staleOnly.checked ? 'stale ' : ''}sources${r.total > r.items.length ? `, the first ${r.items.length} shown` : ''}`;
    srcBody.replaceChildren(...r.items.map((x) => h('tr', {}, h('td', {}, x.url.startsWith('http') ? h('a', { href: x.url, rel: 'noopener noreferrer', target: '_blank' }, x.title || x.url) : (x.title || x.url)),
      h('td', {}, x.language), h('td', {}, x.is_stale ? h('span', { class: 'status failed' }, `stale (${x.fail_count} failures)`) : 'fresh'), h('td', {}, new Date(x.crawled_at).toLocaleString()),
      h('td', {}, h('button', { type: 'button', class: 'show-chunks', 'aria-label': `Chunks of ${x.title || x.url}`, onclick: () => showChunks(x) }, 'Chunks')))));
  };
  staleOnly.addEventListener('change', () => refreshSources().catch(() => {}));
  const sourcesPanel = h('section', { class: 'panel' }, h('h2', {}, 'Sources'), h('label', { class: 'check' }, staleOnly, 'Stale pages only'), srcTotal,
    h('div', { class: 'table-wrap', tabindex: 0 }, h('table', {}, h('thead', {}, h('tr', {}, ['Source', 'Language', 'State', 'Read', 'Chunks'].map((c) => h('th', {}, c)))), srcBody)), chunkPanel);
  main.append(h('h2', {}, name), search, h('section', { class: 'panel' }, h('h2', {}, 'Add files'), drop, out), crawl, sourcesPanel);
  await Promise.all([refreshLogs(), refreshSources(), refreshSchedule()]);
  const t = setInterval(() => { refreshLogs().catch(() => {}); refreshSources().catch(() => {}); refreshKBs().catch(() => {}); }, 3000);
  cleanup.push(() => clearInterval(t));
}

route();
