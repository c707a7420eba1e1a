// The Console page: retrieve, generate and evaluate with RAG pipelines.
import { api, APIError, authHeaders } from './api.js';
import { errorBox, field, fmt, h, main, table } from './dom.js';
import { readEvents } from './events.js';

const seedRules = {
  temperature: (v) => (v < 0 || v > 1 ? 'Temperature must be between 0.0 and 1.0' : ''),
  max_tokens: (v) => (v < 100 || v > 4000 ? 'Max tokens must be between 100 and 4000' : ''),
  top_p: (v) => (v < 0 || v > 1 ? 'Top P must be between 0.0 and 1.0' : ''),
  top_k: (v) => (v < 1 || v > 20 ? 'Top K must be between 1 and 20' : ''),
  query: (v) => (v.trim().length < 1 || v.length > 10000 ? 'Query must be 1-10000 characters' : ''),
};

export async function consolePage() {
  const [ps, ds] = await Promise.all([api('GET', '/v1/pipelines'), api('GET', '/v1/datasets')]);
  main.append(h('h1', {}, 'Console'));
  const dsSel = h(
    'select',
    { id: 'c-ds' },
    h('option', { value: '' }, 'any dataset'),
    ds.datasets.map((d) => h('option', { value: d.id }, d.name)),
  );
  const typeSel = h(
    'select',
    { id: 'c-type' },
    ['', 'normal', 'test'].map((t) => h('option', { value: t }, t || 'any type')),
  );
  const pSel = h('select', { id: 'c-pipeline' });
  const fill = (list) =>
    pSel.replaceChildren(
      ...list.map((p) =>
        h(
          'option',
          { value: p.id },
          `${p.name} (${p.pipeline_type}, ${p.settings.mode}, top ${p.settings.top_k})`,
        ),
      ),
    );
  fill(ps.pipelines);
  const refilter = async () => {
    const qs = new URLSearchParams();
    if (dsSel.value) qs.set('dataset_id', dsSel.value);
    if (typeSel.value) qs.set('pipeline_type', typeSel.value);
    fill((await api('GET', `/v1/pipelines?${qs}`)).pipelines);
  };
  dsSel.addEventListener('change', refilter);
  typeSel.addEventListener('change', refilter);
  if (!ps.pipelines.length) {
    main.append(
      h(
        'p',
        {},
        'No pipeline yet: create one with ',
        h('code', {}, 'quarry pipeline create NAME --kb KB'),
        ' or POST /v1/pipelines.',
      ),
    );
    return;
  }
  const panels = {
    retrieve: retrieveTab(pSel),
    generate: generateTab(pSel),
    evaluate: evaluateTab(ps.pipelines, ds.datasets),
  };
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const body = h('div', { role: 'tabpanel' });
  for (const [name, panel] of Object.entries(panels)) {
    tabs.append(
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          id: `tab-${name}`,
          'aria-selected': name === 'retrieve' ? 'true' : 'false',
          onclick: (ev) => {
            tabs.querySelectorAll('button').forEach((b) => b.setAttribute('aria-selected', 'false'));
            ev.target.setAttribute('aria-selected', 'true');
            body.replaceChildren(panel);
            body.setAttribute('aria-labelledby', ev.target.id);
          },
        },
        name[0].toUpperCase() + name.slice(1),
      ),
    );
  }
  body.append(panels.retrieve);
  body.setAttribute('aria-labelledby', 'tab-retrieve');
  main.append(
    h(
      'div',
      { class: 'row panel' },
      field('Dataset', dsSel).el,
      field('Type', typeSel).el,
      field('Pipeline', pSel).el,
    ),
    tabs,
    body,
  );
}

function chunkTable(chunks) {
  return table(
    ['#', 'Score', 'Source', 'Golden', 'Content'],
    h(
      'tbody',
      {},
      chunks.map((c, i) =>
        h(
          'tr',
          {},
          h('td', {}, i + 1),
          h('td', {}, fmt(c.score)),
          h('td', {}, c.datasource_id),
          h(
            'td',
            {},
            c.is_golden === undefined ? '—' : c.is_golden ? h('span', { class: 'golden' }, 'golden') : 'no',
          ),
          h('td', {}, c.content.slice(0, 400)),
        ),
      ),
    ),
  );
}

function retrieveTab(pSel) {
  const q = h('textarea', { id: 'r-q' });
  const k = h('input', { id: 'r-k', type: 'number', value: 5, min: 1, max: 20 });
  const qf = field('Query', q),
    kf = field('Top K', k);
  const out = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        qf.err.textContent = seedRules.query(q.value);
        kf.err.textContent = seedRules.top_k(Number(k.value));
        if (qf.err.textContent || kf.err.textContent) return;
        out.replaceChildren(h('p', { class: 'muted' }, 'Retrieving…'));
        try {
          const r = await api('POST', `/v1/pipelines/${pSel.value}/retrieve`, {
            query: q.value,
            top_k: Number(k.value),
          });
          out.replaceChildren(
            h('p', {}, `${r.chunks.length} chunks · retrieval_time ${fmt(r.retrieval_time, 4)} s`),
            chunkTable(r.chunks),
          );
        } catch (e) {
          out.replaceChildren(errorBox(e));
        }
      },
    },
    qf.el,
    kf.el,
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Retrieve')),
    out,
  );
}

function generateTab(pSel) {
  const type = h(
    'select',
    { id: 'g-type' },
    ['vllm', 'claude', 'openai', 'ollama'].map((t) => h('option', { value: t }, t)),
  );
  const name = h('input', { id: 'g-model', type: 'text', required: true });
  const endpoint = h('input', { id: 'g-endpoint', type: 'url', placeholder: 'http://localhost:8000/v1' });
  const key = h('input', { id: 'g-key', type: 'password', autocomplete: 'off' });
  const temp = h('input', { id: 'g-temp', type: 'number', step: '0.1', value: 0.7 });
  const maxT = h('input', { id: 'g-max', type: 'number', value: 1000 });
  const topP = h('input', { id: 'g-topp', type: 'number', step: '0.05', value: 0.9 });
  const q = h('textarea', { id: 'g-q' });
  const f = {
    type: field('Model type', type),
    name: field('Model name', name),
    endpoint: field('Endpoint', endpoint, 'Required for vLLM'),
    key: field('API key', key, 'Claude keys start with sk-ant-; sent with this request only'),
    temp: field('Temperature', temp),
    maxT: field('Max tokens', maxT),
    topP: field('Top P', topP),
    q: field('Query', q),
  };
  const messages = h('div', { class: 'messages', 'aria-live': 'polite' });
  let chat = null;
  const check = () => {
    f.temp.err.textContent = seedRules.temperature(Number(temp.value));
    f.maxT.err.textContent = seedRules.max_tokens(Number(maxT.value));
    f.topP.err.textContent = seedRules.top_p(Number(topP.value));
    f.q.err.textContent = seedRules.query(q.value);
    f.key.err.textContent =
      type.value === 'claude' && !key.value.startsWith('sk-ant-') ? 'Invalid Claude API key format' : '';
    f.endpoint.err.textContent =
      type.value === 'vllm' && !/^https?:\/\/.+/.test(endpoint.value) ? 'Invalid vLLM endpoint URL' : '';
    f.name.err.textContent = name.value.trim() ? '' : 'model_name is required';
    return !Object.values(f).some((x) => x.err.textContent);
  };
  for (const c of [type, temp, maxT, topP, key, endpoint]) c.addEventListener('input', check);
  return h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        if (!check()) return;
        if (chat && chat.n >= 50) {
          messages.append(
            h('p', { class: 'error', role: 'alert' }, 'Chat session has reached maximum message limit'),
          );
          return;
        }
        const text = q.value;
        q.value = '';
        messages.append(h('div', { class: 'msg user' }, h('div', { class: 'meta' }, 'You'), text));
        const ans = h('p');
        const meta = h('div', { class: 'meta' }, 'Model · generating…');
        const box = h('div', { class: 'msg' }, meta, ans);
        messages.append(box);
        const body = {
          query: text,
          model_config: {
            type: type.value,
            model_name: name.value,
            api_key: key.value || undefined,
            endpoint: endpoint.value || undefined,
            parameters: {
              temperature: Number(temp.value),
              max_tokens: Number(maxT.value),
              top_p: Number(topP.value),
            },
          },
          chat_id: chat ? chat.id : 'new',
        };
        try {
          const r = await fetch(`/v1/pipelines/${pSel.value}/generate`, {
            method: 'POST',
            headers: authHeaders({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
            body: JSON.stringify(body),
          });
          if (!r.ok) throw new APIError(r.status, await r.json().catch(() => null));
          await readEvents(r, (ev, raw) => {
            const data = JSON.parse(raw || 'null');
            if (ev === 'delta') ans.textContent += data.text;
            if (ev === 'answer') {
              ans.textContent = data.answer;
              chat = { id: data.chat_id, n: data.chat_messages };
              meta.textContent = `${data.model} · ${data.tokens_used} tokens · retrieval ${fmt(data.retrieval_time)} s · model ${fmt(data.llm_time)} s · total ${fmt(data.generation_time)} s`;
              box.append(
                h(
                  'details',
                  {},
                  h('summary', {}, `${data.sources.length} sources`),
                  chunkTable(data.sources),
                ),
              );
            }
            if (ev === 'error') {
              meta.textContent = 'Model error';
              ans.replaceChildren(errorBox(new APIError(data.status, data)));
            }
            return false;
          });
        } catch (e) {
          meta.textContent = 'Error';
          ans.replaceChildren(errorBox(e));
        }
      },
    },
    h('div', { class: 'row' }, f.type.el, f.name.el, f.endpoint.el, f.key.el),
    h('div', { class: 'row' }, f.temp.el, f.maxT.el, f.topP.el),
    messages,
    f.q.el,
    h(
      'div',
      { class: 'row' },
      h('button', { class: 'primary', type: 'submit' }, 'Generate'),
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            if (chat && chat.id) await api('DELETE', `/v1/sessions/${chat.id}`).catch(() => {});
            chat = null;
            messages.replaceChildren();
          },
        },
        'Clear chat',
      ),
    ),
  );
}

// chart draws the pipelines' scores side by side, one group per metric,
// as SVG (values 0-1); the table beside it carries the same numbers.
function chart(metrics, runs, k) {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 640,
    H = 240,
    left = 34,
    bottom = 28,
    top = 10;
  const gw = (W - left) / metrics.length,
    bw = Math.min(32, (gw - 16) / runs.length);
  const el = (name, attrs, ...kids) => {
    const e = document.createElementNS(NS, name);
    for (const [a, v] of Object.entries(attrs)) e.setAttribute(a, v);
    e.append(...kids);
    return e;
  };
  const y = (v) => top + (1 - v) * (H - top - bottom);
  const svg = el('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart',
    role: 'img',
    'aria-label':
      `Scores at k=${k}: ` +
      metrics
        .map(
          ([label, key]) =>
            `${label} ` + runs.map((r) => `${r.pipeline} ${fmt(r.overall[key], 3)}`).join(', '),
        )
        .join('; '),
  });
  for (const v of [0, 0.5, 1])
    svg.append(
      el('line', { x1: left, x2: W, y1: y(v), y2: y(v), class: 'grid' }),
      el('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, String(v)),
    );
  metrics.forEach(([label, key], i) => {
    const x0 = left + i * gw + (gw - bw * runs.length) / 2;
    runs.forEach((r, j) => {
      const v = Math.max(0, Math.min(1, Number(r.overall[key]) || 0));
      svg.append(
        el(
          'rect',
          { x: x0 + j * bw, y: y(v), width: bw - 2, height: y(0) - y(v), class: `series-${j % 4}` },
          el('title', {}, `${r.pipeline}: ${label}@${k} ${fmt(r.overall[key], 4)}`),
        ),
      );
    });
    svg.append(el('text', { x: left + i * gw + gw / 2, y: H - 8, 'text-anchor': 'middle' }, label));
  });
  const legend = h(
    'ul',
    { class: 'legend' },
    runs.map((r, j) =>
      h('li', {}, h('span', { class: `swatch series-${j % 4}`, 'aria-hidden': 'true' }), r.pipeline),
    ),
  );
  return h('figure', { class: 'chart-wrap' }, svg, legend);
}

function evaluateTab(pipelines, datasets) {
  const boxes = pipelines.map((p) =>
    h('label', { class: 'chip' }, h('input', { type: 'checkbox', value: p.id }), ' ', p.name),
  );
  const ds = h(
    'select',
    { id: 'e-ds' },
    datasets.map((d) => h('option', { value: d.id }, d.name)),
  );
  const k = h('input', { id: 'e-k', type: 'number', value: 10, min: 1, max: 100 });
  const out = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        const chosen = boxes
          .map((b) => b.querySelector('input'))
          .filter((c) => c.checked)
          .map((c) => c.value);
        if (!chosen.length) {
          out.replaceChildren(h('p', { class: 'error' }, 'Pick at least one pipeline.'));
          return;
        }
        out.replaceChildren(h('p', { class: 'muted' }, 'Evaluating…'));
        try {
          const c = await api('POST', '/v1/evaluations', {
            pipelines: chosen,
            dataset: ds.value,
            k: Number(k.value),
          });
          const metrics = [
            ['nDCG', 'ndcg'],
            ['Recall', 'recall'],
            ['Precision', 'precision'],
            ['MRR', 'mrr'],
            ['Hit rate', 'hit_rate'],
          ];
          out.replaceChildren(
            h('p', {}, `${c.dataset}, k=${c.k}, ${c.runs[0].overall.queries} questions`),
            chart(metrics, c.runs, c.k),
            table(
              ['Metric', ...c.runs.map((r) => r.pipeline)],
              h(
                'tbody',
                {},
                metrics.map(([label, key]) =>
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'row' }, `${label}@${c.k}`),
                    c.runs.map((r) =>
                      h(
                        'td',
                        {},
                        h('div', { class: 'bar', 'data-w': r.overall[key] }),
                        fmt(r.overall[key], 4),
                      ),
                    ),
                  ),
                ),
              ),
            ),
            ...c.differences.map((d) =>
              h(
                'p',
                {},
                `${d.pipeline} vs ${d.baseline}: nDCG ${d.ndcg >= 0 ? '+' : ''}${fmt(d.ndcg, 4)}, better on ${d.better} questions, worse on ${d.worse}`,
              ),
            ),
          );
          out.querySelectorAll('.bar').forEach((b) => {
            b.style.width = `${Math.round(Number(b.dataset.w) * 100)}%`;
          });
        } catch (e) {
          out.replaceChildren(errorBox(e));
        }
      },
    },
    h('fieldset', {}, h('legend', {}, 'Pipelines'), h('div', { class: 'chips' }, boxes)),
    h('div', { class: 'row' }, field('Dataset', ds).el, field('k', k).el),
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Evaluate')),
    out,
  );
}
