// The Ask page: questions over a knowledge base, in a conversation.
import { api } from './api.js';
import { errorBox, field, fmt, h, main } from './dom.js';

export async function askPage() {
  const kbs = (await api('GET', '/v1/knowledge-bases')).items || [];
  main.append(h('h1', {}, 'Ask'));
  if (!kbs.length) {
    main.append(h('p', {}, 'No knowledge base yet: ', h('a', { href: '#/knowledge' }, 'add one'), '.'));
    return;
  }
  const kb = h(
    'select',
    { id: 'ask-kb' },
    kbs.map((k) => h('option', { value: k.name }, k.name)),
  );
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
        messages.append(
          h(
            'p',
            { class: 'error', role: 'alert' },
            'The conversation expired after 30 minutes without a question; a new one starts with your next question.',
          ),
        );
      } else messages.append(errorBox(e));
    }
  }
  async function restore() {
    messages.replaceChildren();
    const sid = sessionStorage.getItem(sessKey());
    if (!sid) return;
    try {
      const s = await api('GET', `/v1/sessions/${sid}`);
      for (const m of s.messages)
        messages.append(
          m.role === 'user'
            ? h('div', { class: 'msg user' }, h('div', { class: 'meta' }, 'You'), m.content)
            : answerEl(
                {
                  answer: m.content,
                  sources: m.sources || [],
                  confidence: m.confidence_score,
                  suggestions: m.suggested_questions || [],
                },
                ask,
              ),
        );
    } catch (e) {
      sessionStorage.removeItem(sessKey());
      if (/expired/.test(e.message))
        messages.append(
          h('p', { class: 'muted' }, 'The earlier conversation expired; ask to start a new one.'),
        );
    }
  }
  kb.addEventListener('change', restore);
  main.append(
    h('div', { class: 'row' }, field('Knowledge base', kb).el),
    messages,
    h(
      'form',
      {
        class: 'stack',
        onsubmit: (ev) => {
          ev.preventDefault();
          const t = q.value.trim();
          if (!t) {
            qf.err.textContent = 'Type a question.';
            return;
          }
          qf.err.textContent = '';
          q.value = '';
          ask(t);
        },
      },
      qf.el,
      h(
        'div',
        { class: 'row' },
        h('button', { class: 'primary', type: 'submit' }, 'Ask'),
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              const sid = sessionStorage.getItem(sessKey());
              if (sid) await api('DELETE', `/v1/sessions/${sid}`).catch(() => {});
              sessionStorage.removeItem(sessKey());
              messages.replaceChildren();
            },
          },
          'New conversation',
        ),
      ),
    ),
  );
  await restore();
}

// codeSpans splits an answer into its text and the code it quotes
// between backticks (a command, a statement), shown as code.
function codeSpans(text) {
  const parts = [];
  let last = 0;
  for (const m of String(text || '').matchAll(/(`+)([^`](?:[\s\S]*?[^`])?)\1(?!`)/g)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    let code = m[2];
    if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1);
    parts.push(h('code', {}, code));
    last = m.index + m[0].length;
  }
  if (last < String(text || '').length) parts.push(text.slice(last));
  return parts;
}

function answerEl(a, ask) {
  return h(
    'div',
    { class: 'msg' },
    h(
      'div',
      { class: 'meta' },
      'Quarry',
      typeof a.confidence === 'number' ? ` · confidence ${fmt(a.confidence, 2)}` : '',
      a.unknown ? ' · does not know' : '',
    ),
    h('p', {}, codeSpans(a.answer)),
    a.sources && a.sources.length
      ? h(
          'ul',
          { 'aria-label': 'Sources' },
          a.sources.map((s) =>
            h(
              'li',
              {},
              s.startsWith('http') ? h('a', { href: s, rel: 'noopener noreferrer', target: '_blank' }, s) : s,
            ),
          ),
        )
      : null,
    a.suggestions && a.suggestions.length
      ? h(
          'div',
          { class: 'chips', 'aria-label': 'Suggested questions' },
          a.suggestions.map((s) => h('button', { type: 'button', class: 'chip', onclick: () => ask(s) }, s)),
        )
      : null,
    a.note ? h('p', { class: 'muted' }, a.note) : null,
  );
}
