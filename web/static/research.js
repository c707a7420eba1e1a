// The Research page: start a research, follow it live, read its report,
// ask a follow-up in its thread.
import { api, authHeaders } from './api.js';
import { errorBox, field, fmt, h, main, showBanner, statusBadge, table } from './dom.js';
import { follow } from './events.js';
import { onLeave, route } from './router.js';

export async function researchPage(args) {
  if (args[0] === 'thread' && args[1]) return threadDetail(args[1]);
  if (args[0]) return researchDetail(args[0]);
  const kbs = (await api('GET', '/v1/knowledge-bases')).items || [];
  const q = h('textarea', { id: 'question', name: 'question', required: true, maxlength: 2000 });
  const level = h(
    'select',
    { id: 'level' },
    ['quick', 'standard', 'comprehensive'].map((l) =>
      h('option', { value: l, selected: l === 'standard' }, l),
    ),
  );
  // The knowledge base made last is the one a user most likely means.
  const newest = kbs.reduce((a, k) => (a && a.id > k.id ? a : k), null);
  const srcBoxes = [...kbs.map((k) => `kb:${k.name}`), 'web', 'arxiv', 'wikipedia'].map((s) =>
    h(
      'label',
      { class: 'chip' },
      h('input', { type: 'checkbox', value: s, checked: !!newest && s === `kb:${newest.name}` }),
      ' ',
      s,
    ),
  );
  const err = h('div');
  const qf = field('Question', q);
  // Breadth and depth replace the level; budgets bound any research.
  const adv = {
    breadth: field(
      'Breadth',
      h('input', { id: 'breadth', type: 'number', min: 1, max: 20, placeholder: '5' }),
      'sub-questions per round, 1-20; with depth, replaces the level',
    ),
    depth: field(
      'Depth',
      h('input', { id: 'depth', type: 'number', min: 0, max: 5, placeholder: '2' }),
      'follow-up rounds, 0-5; with breadth, replaces the level',
    ),
    max_tokens: field(
      'Token budget',
      h('input', { id: 'max-tokens', type: 'number', min: 0, step: 1000, placeholder: 'no limit' }),
      'model tokens in all; the research stops and says so when they run out',
    ),
    timeout: field(
      'Time budget',
      h('input', { id: 'timeout', type: 'text', placeholder: 'e.g. 90s or 5m' }),
      'a duration',
    ),
  };
  const levelField = field(
    'Level',
    level,
    'quick: 2 sub-questions, 1 round; standard: 4 and 2; comprehensive: 6 and 3',
  );
  const form = h(
    'form',
    {
      class: 'stack panel',
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.replaceChildren();
        for (const f of [qf, levelField, ...Object.values(adv)]) f.err.textContent = '';
        const sources = srcBoxes
          .map((l) => l.querySelector('input'))
          .filter((c) => c.checked)
          .map((c) => c.value);
        const body = { question: q.value, sources };
        const v = Object.fromEntries(
          Object.entries(adv).map(([k, f]) => [k, f.el.querySelector('input').value]),
        );
        if (v.breadth === '' && v.depth === '') body.level = level.value;
        for (const k of ['breadth', 'depth', 'max_tokens']) if (v[k] !== '') body[k] = Number(v[k]);
        if (v.timeout !== '') body.timeout = v.timeout.trim();
        try {
          const r = await api('POST', '/v1/researches', body);
          location.hash = `#/research/${r.id}`;
        } catch (e) {
          const fields = { question: qf, level: levelField, ...adv }; // the API names fields as the body does
          const target = Object.hasOwn(fields, e.field || '') ? fields[e.field] : null;
          if (target) target.err.textContent = e.message;
          else err.append(errorBox(e));
        }
      },
    },
    h('h1', {}, 'Research'),
    qf.el,
    h('fieldset', { class: 'stack' }, h('legend', {}, 'Sources'), h('div', { class: 'chips' }, srcBoxes)),
    levelField.el,
    h(
      'details',
      {},
      h('summary', {}, 'Breadth, depth and budgets'),
      h('div', { class: 'row' }, ...Object.values(adv).map((f) => f.el)),
    ),
    err,
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Start research')),
  );
  const list = h('tbody');
  main.append(form, h('h2', {}, 'Recent researches'), table(['Question', 'Status', 'Created'], list));
  const refresh = async () => {
    const rs = (await api('GET', '/v1/researches?limit=20')).items || [];
    list.replaceChildren(
      ...rs.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/research/${r.id}` }, r.question)),
          h('td', {}, statusBadge(r.status)),
          h('td', {}, new Date(r.created_at).toLocaleString()),
        ),
      ),
    );
    if (!rs.length) list.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'No researches yet.')));
  };
  const threads = h('tbody');
  main.append(h('h2', {}, 'Threads'), table(['Thread', 'Status', 'Last activity'], threads));
  const refreshThreads = async () => {
    const ts = (await api('GET', '/v1/threads?limit=20')).items || [];
    threads.replaceChildren(
      ...ts.map((th) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/research/thread/${th.id}` }, th.title)),
          h('td', {}, statusBadge(th.status)),
          h('td', {}, new Date(th.last_activity).toLocaleString()),
        ),
      ),
    );
    if (!ts.length) threads.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'No threads yet.')));
  };
  await Promise.all([refresh(), refreshThreads()]);
  // Researches started elsewhere (the CLI, another browser) appear here.
  const t = setInterval(() => {
    refresh().catch(() => {});
    refreshThreads().catch(() => {});
  }, 5000);
  onLeave(() => clearInterval(t));
}

async function threadDetail(tid) {
  let th;
  try {
    th = await api('GET', `/v1/threads/${encodeURIComponent(tid)}`);
  } catch (e) {
    if (e.status === 404) {
      main.append(
        h('h1', {}, 'Thread not found'),
        h('p', {}, h('a', { href: '#/research' }, 'All researches')),
      );
      return;
    }
    throw e;
  }
  main.append(
    h('p', {}, h('a', { href: '#/research' }, '← All researches')),
    h('h1', {}, th.title),
    h('p', {}, statusBadge(th.status)),
    h(
      'ol',
      { class: 'messages' },
      th.queries.map((q) =>
        h(
          'li',
          { class: 'msg' },
          h('div', { class: 'meta' }, statusBadge(q.status), ' ', new Date(q.created_at).toLocaleString()),
          h('p', {}, h('a', { href: `#/research/${q.research_id}` }, q.question)),
          q.answer ? h('p', {}, q.answer) : null,
        ),
      ),
    ),
    th.status === 'closed'
      ? h('p', { class: 'muted' }, 'This thread is closed.')
      : h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              await api('POST', `/v1/threads/${tid}/close`);
              route();
            },
          },
          'Close thread',
        ),
  );
}

async function researchDetail(rid) {
  let r;
  try {
    r = await api('GET', `/v1/researches/${encodeURIComponent(rid)}`);
  } catch (e) {
    if (e.status === 404) {
      main.append(
        h('h1', {}, 'Research not found'),
        h(
          'p',
          {},
          `There is no research with the id ${rid}. `,
          h('a', { href: '#/research' }, 'Start one'),
          '.',
        ),
      );
      return;
    }
    throw e;
  }
  const status = h('span', {}, statusBadge(r.status));
  const stage = h('span', { class: 'muted' }, r.stage || '');
  const agents = h('div', { class: 'agents', 'aria-live': 'polite' });
  const agentEls = {};
  const log = h('ol', { class: 'log', 'aria-label': 'Message log', tabindex: 0 });
  const sources = h('ol', { class: 'log', 'aria-label': 'Sources read', tabindex: 0 });
  const usage = h('p', { class: 'muted' });
  const report = h(
    'article',
    { class: 'report', 'aria-busy': 'true' },
    h('p', { class: 'muted' }, 'The report appears here when it is written.'),
  );
  const actions = h('div', { class: 'row' });
  const showUsage = (u, t) => {
    if (u)
      usage.textContent = `${u.llm_calls || 0} model calls · ${(u.input_tokens || 0) + (u.output_tokens || 0)} tokens${t?.total_seconds ? ` · ${fmt(t.total_seconds, 1)} s` : ''}`;
  };
  // Facts and the conflicts among them, apart from the report's prose.
  const facts = h(
    'div',
    { 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Facts are checked across sources when the research has read them.'),
  );
  function showFacts(res) {
    const fs = res.facts || [],
      ds = res.discrepancies || [];
    if (!fs.length && !ds.length) return;
    const verified = fs.filter((f) => f.verified).length;
    facts.replaceChildren(
      h(
        'p',
        {},
        `${fs.length} facts, ${verified} verified by two or more independent sources; ${ds.length} ${ds.length === 1 ? 'conflict' : 'conflicts'}.`,
      ),
      ds.length
        ? h(
            'ul',
            { class: 'conflicts' },
            ds.map((d) =>
              h(
                'li',
                {},
                h('strong', {}, d.topic),
                h('br'),
                d.resolution,
                h('span', { class: 'muted' }, ` (${d.strategy}, confidence ${fmt(d.confidence, 2)})`),
              ),
            ),
          )
        : '',
    );
  }
  function setAgent(a) {
    let el = agentEls[a.agent];
    if (!el) {
      el = agentEls[a.agent] = {
        bar: h('progress', { max: 1, value: 0, 'aria-label': `${a.agent} progress` }),
        st: h('span'),
        task: h('span', { class: 'muted' }),
      };
      agents.append(
        h(
          'div',
          { class: 'agent' },
          h('div', { class: 'agent-head' }, h('strong', {}, a.agent), el.st),
          el.bar,
          el.task,
        ),
      );
    }
    el.bar.value = a.progress || 0;
    el.st.replaceChildren(statusBadge(a.status));
    el.task.textContent = a.error || a.task || a.result || '';
  }
  async function loadReport() {
    const html = await api('GET', `/v1/researches/${rid}/report?format=html`);
    const tpl = document.createElement('template');
    tpl.innerHTML = html; // sanitised by the server's allow-list
    report.replaceChildren(tpl.content);
    report.setAttribute('aria-busy', 'false');
    try {
      const ck = await api('GET', `/v1/researches/${rid}/check`);
      report.append(
        h(
          'p',
          { class: 'muted' },
          `Citation check: ${ck.supported} of ${ck.cited_passages} cited passages supported by their sources (${ck.method}).`,
        ),
      );
    } catch {
      /* a report without checks */
    }
  }
  function renderActions(cur) {
    actions.replaceChildren();
    if (cur === 'pending' || cur === 'processing')
      actions.append(
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              try {
                await api('POST', `/v1/researches/${rid}/cancel`);
              } catch (e) {
                actions.append(errorBox(e));
              }
            },
          },
          'Cancel',
        ),
      );
    if (cur === 'failed' || cur === 'canceled')
      actions.append(
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              await api('POST', `/v1/researches/${rid}/resume`);
              route();
            },
          },
          'Resume',
        ),
      );
    if (cur === 'completed')
      for (const f of ['md', 'json', 'html'])
        actions.append(
          h('button', { type: 'button', onclick: () => download(rid, f) }, `Export ${f.toUpperCase()}`),
        );
  }
  main.append(
    h('p', {}, h('a', { href: '#/research' }, '← All researches')),
    h('h1', {}, r.question),
    h(
      'p',
      {},
      status,
      ' ',
      stage,
      r.thread_id
        ? h('a', { href: `#/research/thread/${r.thread_id}` }, ` · thread ${r.thread_id.slice(0, 8)}`)
        : '',
    ),
    actions,
    h(
      'div',
      { class: 'grid' },
      h('section', { 'aria-labelledby': 'rep-h' }, h('h2', { id: 'rep-h' }, 'Report'), report, followUp(r)),
      h(
        'aside',
        {},
        h('section', { class: 'panel' }, h('h2', {}, 'Agents'), agents, usage),
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'facts-h' },
          h('h2', { id: 'facts-h' }, 'Facts and conflicts'),
          facts,
        ),
        h('section', { class: 'panel' }, h('h2', {}, 'Sources'), sources),
        h('section', { class: 'panel' }, h('h2', {}, 'Messages'), log),
      ),
    ),
  );
  renderActions(r.status);
  showUsage(r.usage, r.timings);
  showFacts(r);
  if (r.status === 'completed') await loadReport();
  const stream = follow(`/v1/researches/${rid}/events`, {
    onEvent(type, e) {
      if (e.status) {
        status.replaceChildren(statusBadge(e.status.status));
        stage.textContent = e.status.stage;
        renderActions(e.status.status);
      }
      if (e.agent) setAgent(e.agent);
      if (e.message) log.append(h('li', {}, h('strong', {}, e.message.from), `: ${e.message.content}`));
      if (e.warning) log.append(h('li', { class: 'error' }, e.warning));
      if (e.source)
        sources.append(
          h(
            'li',
            {},
            h(
              'a',
              { href: e.source.url, rel: 'noopener noreferrer', target: '_blank' },
              e.source.title || e.source.url,
            ),
            h('span', { class: 'muted' }, ` ${e.source.domain || ''}`),
          ),
        );
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
      status.replaceChildren(statusBadge(now.status));
      renderActions(now.status);
      showUsage(now.usage, now.timings);
      showFacts(now);
      if (now.status === 'completed') await loadReport();
      else if (now.error) {
        report.replaceChildren(h('p', { class: 'error', role: 'alert' }, `${now.status}: ${now.error}`));
        report.setAttribute('aria-busy', 'false');
      }
    },
    onState(s) {
      showBanner(s === 'reconnecting' ? 'Connection lost — reconnecting; nothing is missed.' : '');
    },
  });
  onLeave(() => stream.stop());
}

function followUp(r) {
  if (!r.thread_id) return null;
  const q = h('input', { id: 'followup', type: 'text', maxlength: 2000 });
  const f = field('Ask a follow-up in this thread', q);
  return h(
    'form',
    {
      class: 'stack panel',
      onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          const n = await api('POST', `/v1/threads/${r.thread_id}/researches`, {
            question: q.value,
            level: r.options?.level || 'standard',
          });
          location.hash = `#/research/${n.id}`;
        } catch (e) {
          f.err.textContent = e.message;
        }
      },
    },
    f.el,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Ask follow-up')),
  );
}

async function download(rid, format) {
  const r = await fetch(`/v1/researches/${rid}/report?format=${format}`, { headers: authHeaders() });
  const blob = await r.blob();
  const a = h('a', { href: URL.createObjectURL(blob), download: `research-${rid.slice(0, 8)}.${format}` });
  document.body.append(a);
  a.click();
  a.remove();
}
