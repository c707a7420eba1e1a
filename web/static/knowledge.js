// The Knowledge page: knowledge bases, their files, crawls and sources.
import { api } from './api.js';
import { errorBox, field, fmt, h, main, statusBadge, table } from './dom.js';
import { onLeave } from './router.js';

export async function knowledgePage(args) {
  const kbs = (await api('GET', '/v1/knowledge-bases')).items || [];
  main.append(h('h1', {}, 'Knowledge'));
  const name = h('input', {
    id: 'kb-name',
    type: 'text',
    required: true,
    pattern: '[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}',
    maxlength: 64,
  });
  const nf = field('New knowledge base', name);
  const kbBody = h('tbody');
  const showKBs = (list) =>
    kbBody.replaceChildren(
      ...list.map((k) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/knowledge/${encodeURIComponent(k.name)}` }, k.name)),
          h('td', {}, k.sources),
          h('td', {}, k.chunks),
          h('td', {}, k.stale),
        ),
      ),
    );
  const refreshKBs = async () => showKBs((await api('GET', '/v1/knowledge-bases')).items || []);
  showKBs(kbs);
  main.append(
    table(['Name', 'Sources', 'Chunks', 'Stale'], kbBody),
    h(
      'form',
      {
        class: 'row panel',
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            await api('POST', '/v1/knowledge-bases', { name: name.value });
            location.hash = `#/knowledge/${encodeURIComponent(name.value)}`;
          } catch (e) {
            nf.err.textContent = e.message;
          }
        },
      },
      nf.el,
      h('button', { type: 'submit' }, 'Create'),
    ),
  );
  const kb = args[0] || (kbs[0] && kbs[0].name);
  if (kb) await kbDetail(kb, refreshKBs);
}

async function kbDetail(name, refreshKBs = async () => {}) {
  const base = `/v1/knowledge-bases/${encodeURIComponent(name)}`;
  const out = h('div', { 'aria-live': 'polite' });
  const q = h('input', { id: 'kb-q', type: 'search' });
  const mode = h(
    'select',
    { id: 'kb-mode' },
    ['hybrid', 'bm25', 'vector'].map((m) => h('option', { value: m }, m)),
  );
  const lang = h(
    'select',
    { id: 'kb-lang' },
    ['', 'en', 'ko'].map((m) => h('option', { value: m }, m || 'any language')),
  );
  const k = h('input', { id: 'kb-k', type: 'number', value: 5, min: 1, max: 100 });
  const stale = h('input', { id: 'kb-stale', type: 'checkbox' });
  const results = h('div', { 'aria-live': 'polite' });
  const search = h(
    'form',
    {
      class: 'stack panel',
      onsubmit: async (ev) => {
        ev.preventDefault();
        const qs = new URLSearchParams({ q: q.value, k: k.value, mode: mode.value });
        if (lang.value) qs.set('lang', lang.value);
        if (stale.checked) qs.set('include_stale', 'true');
        try {
          const r = await api('GET', `${base}/search?${qs}`);
          results.replaceChildren(
            h(
              'ol',
              { class: 'results' },
              (r.items || []).map((x) =>
                h(
                  'li',
                  {},
                  h('strong', {}, x.title || x.source_url),
                  ` (${fmt(x.score)}) `,
                  h('span', { class: 'muted' }, x.source_url),
                  h('p', {}, x.text.slice(0, 300)),
                ),
              ),
            ),
          );
        } catch (e) {
          results.replaceChildren(errorBox(e));
        }
      },
    },
    h('h2', {}, `Search ${name}`),
    h(
      'div',
      { class: 'row' },
      field('Query', q).el,
      field('Mode', mode).el,
      field('Language', lang).el,
      field('Results', k).el,
    ),
    h('label', { class: 'check' }, stale, 'Include stale pages'),
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'kb-search' }, 'Search')),
    results,
  );

  const files = h('input', { id: 'kb-files', type: 'file', multiple: true });
  const drop = h(
    'div',
    { class: 'drop' },
    'Drop files here, or ',
    h('label', { for: 'kb-files', class: 'auto' }, 'choose them'),
    files,
  );
  const upload = async (list) => {
    const fd = new FormData();
    for (const f of list) fd.append('file', f);
    out.replaceChildren(h('p', { class: 'muted' }, `Uploading ${list.length} files…`));
    try {
      const r = await api('POST', `${base}/documents`, fd);
      if (r.status === 'running') {
        out.replaceChildren(h('p', {}, 'A large upload is being ingested in the background.'));
        return;
      }
      const rep = r.report || r;
      refreshSources().catch(() => {});
      refreshKBs().catch(() => {});
      out.replaceChildren(
        h(
          'p',
          {},
          `Added ${rep.added}, updated ${rep.updated}, unchanged ${rep.unchanged}: ${rep.chunks} chunks.`,
        ),
        (rep.failed || []).length
          ? h(
              'ul',
              { 'aria-label': 'Files not added' },
              rep.failed.map((p) => h('li', { class: 'error' }, `${p.origin}: ${p.reason}`)),
            )
          : null,
      );
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  files.addEventListener('change', () => upload(files.files));
  drop.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    upload(ev.dataTransfer.files);
  });

  const url = h('input', { id: 'kb-url', type: 'url', placeholder: 'https://docs.example.com/' });
  const uf = field('Crawl a site', url);
  const logs = h('tbody');
  const refreshLogs = async () => {
    const r = await api('GET', `${base}/crawls`);
    logs.replaceChildren(
      ...(r.items || []).map((l) =>
        h(
          'tr',
          {},
          h('td', {}, l.url),
          h('td', {}, statusBadge(l.status)),
          h('td', {}, l.pages_crawled),
          h('td', {}, l.pages_updated),
          h('td', {}, l.pages_failed),
          h('td', {}, l.error_message || ''),
        ),
      ),
    );
  };
  // The re-crawl schedule is stored with the knowledge base; whichever
  // server or worker runs jobs on this store crawls it on time.
  const every = h('input', {
    id: 'kb-every',
    type: 'text',
    value: '5m',
    size: 8,
    'aria-describedby': 'kb-schedule',
  });
  const ef = field('Re-crawl every', every);
  const schedInfo = h('p', { class: 'muted', id: 'kb-schedule', 'aria-live': 'polite' });
  const refreshSchedule = async () => {
    try {
      const sc = await api('GET', `${base}/schedule`);
      schedInfo.textContent = `Re-crawls ${sc.url} every ${sc.every}; next run due ${new Date(sc.next_at).toLocaleString()}.`;
    } catch (e) {
      schedInfo.textContent = e.status === 404 ? 'No scheduled re-crawl.' : e.message;
    }
  };
  const setSchedule = async () => {
    try {
      await api('PUT', `${base}/schedule`, { url: url.value, every: every.value });
      ef.err.textContent = '';
      await refreshSchedule();
    } catch (e) {
      ef.err.textContent = e.message;
    }
  };
  const removeSchedule = async () => {
    try {
      await api('DELETE', `${base}/schedule`);
      ef.err.textContent = '';
      await refreshSchedule();
    } catch (e) {
      ef.err.textContent = e.message;
    }
  };
  const crawl = h(
    'form',
    {
      class: 'stack panel',
      onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          await api('POST', `${base}/crawls`, { url: url.value });
          uf.err.textContent = '';
          await refreshLogs();
        } catch (e) {
          uf.err.textContent = e.message;
        }
      },
    },
    uf.el,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Start crawl')),
    h(
      'div',
      { class: 'row' },
      ef.el,
      h('button', { type: 'button', id: 'kb-schedule-set', onclick: setSchedule }, 'Schedule re-crawl'),
      h('button', { type: 'button', id: 'kb-schedule-off', onclick: removeSchedule }, 'Remove schedule'),
    ),
    schedInfo,
    table(['URL', 'Status', 'Crawled', 'Updated', 'Failed', 'Error'], logs),
  );
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
      const r = await api(
        'GET',
        `${base}/chunks?source=${encodeURIComponent(x.url)}&limit=100&offset=${shown}`,
      );
      list.append(
        ...r.items.map((c) =>
          h(
            'li',
            {},
            h('span', { class: 'muted' }, `#${c.chunk_index} · ${c.tokens} tokens · ${c.language}`),
            h('p', {}, c.text),
          ),
        ),
      );
      head.textContent = `${r.total} chunks of ${x.title || x.url}${r.total > list.children.length ? `, the first ${list.children.length} shown` : ''}`;
      more.hidden = list.children.length >= r.total || r.items.length === 0;
    };
    more.addEventListener('click', () => page().catch((e) => chunkPanel.append(errorBox(e))));
    try {
      await page();
      chunkPanel.replaceChildren(head, list, more);
    } catch (e) {
      chunkPanel.replaceChildren(errorBox(e));
    }
  };
  const srcTotal = h('p', { class: 'muted' });
  const refreshSources = async () => {
    const r = await api('GET', `${base}/sources?limit=200${staleOnly.checked ? '&stale=true' : ''}`);
    srcTotal.textContent = `${r.total} ${staleOnly.checked ? 'stale ' : ''}sources${r.total > r.items.length ? `, the first ${r.items.length} shown` : ''}`;
    srcBody.replaceChildren(
      ...r.items.map((x) =>
        h(
          'tr',
          {},
          h(
            'td',
            {},
            x.url.startsWith('http')
              ? h('a', { href: x.url, rel: 'noopener noreferrer', target: '_blank' }, x.title || x.url)
              : x.title || x.url,
          ),
          h('td', {}, x.language),
          h(
            'td',
            {},
            x.is_stale ? h('span', { class: 'status failed' }, `stale (${x.fail_count} failures)`) : 'fresh',
          ),
          h('td', {}, new Date(x.crawled_at).toLocaleString()),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'show-chunks',
                'aria-label': `Chunks of ${x.title || x.url}`,
                onclick: () => showChunks(x),
              },
              'Chunks',
            ),
          ),
        ),
      ),
    );
  };
  staleOnly.addEventListener('change', () => refreshSources().catch(() => {}));
  const sourcesPanel = h(
    'section',
    { class: 'panel' },
    h('h2', {}, 'Sources'),
    h('label', { class: 'check' }, staleOnly, 'Stale pages only'),
    srcTotal,
    table(['Source', 'Language', 'State', 'Read', 'Chunks'], srcBody),
    chunkPanel,
  );
  main.append(
    h('h2', {}, name),
    search,
    h('section', { class: 'panel' }, h('h2', {}, 'Add files'), drop, out),
    crawl,
    sourcesPanel,
  );
  await Promise.all([refreshLogs(), refreshSources(), refreshSchedule()]);
  const t = setInterval(() => {
    refreshLogs().catch(() => {});
    refreshSources().catch(() => {});
    refreshKBs().catch(() => {});
  }, 3000);
  onLeave(() => clearInterval(t));
}
