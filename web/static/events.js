// Server-Sent Events over fetch (so headers can carry the token).
import { APIError, askToken, authHeaders } from './api.js';

// readEvents calls onEvent(event, data, id) for each event of a response
// until the stream ends or onEvent returns true.
export async function readEvents(r, onEvent) {
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let ev = 'message',
        data = '',
        seq = null,
        hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) ev = line.slice(6).trim();
        else if (line.startsWith('data:')) {
          data += line.slice(5).trim();
          hasData = true;
        } else if (line.startsWith('id:')) seq = Number(line.slice(3).trim());
      }
      if (!hasData) continue; // "retry:" and ": keep-alive" blocks are not events
      if (onEvent(ev, data, seq)) {
        reader.cancel().catch(() => {});
        return;
      }
    }
  }
}

// follow reads a research's events, resuming from the last seq.
export function follow(path, { after = 0, onEvent, onEnd, onState }) {
  let last = after,
    stopped = false,
    ctrl = null,
    wait = 500;
  async function once() {
    ctrl = new AbortController();
    const r = await fetch(`${path}?after=${last}`, {
      headers: authHeaders({ Accept: 'text/event-stream' }),
      signal: ctrl.signal,
    });
    if (r.status === 401) {
      await askToken();
      return;
    }
    if (r.status === 204) {
      stopped = true;
      onEnd && onEnd();
      return;
    }
    if (!r.ok) throw new APIError(r.status, await r.json().catch(() => null));
    onState && onState('live');
    wait = 500;
    await readEvents(r, (ev, data, seq) => {
      if (ev === 'end') {
        stopped = true;
        onEnd && onEnd();
        return true;
      }
      if (ev === 'reconnect') return true;
      if (seq !== null) {
        if (seq <= last) return false; // never twice
        last = seq;
      }
      try {
        onEvent(ev, JSON.parse(data), seq);
      } catch (e) {
        console.error(e);
      }
      return false;
    });
  }
  (async () => {
    while (!stopped) {
      try {
        await once();
      } catch (e) {
        if (stopped || e.name === 'AbortError') return;
      }
      if (stopped) return;
      onState && onState('reconnecting');
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 5000);
    }
  })();
  return {
    stop() {
      stopped = true;
      ctrl && ctrl.abort();
    },
    get last() {
      return last;
    },
  };
}
