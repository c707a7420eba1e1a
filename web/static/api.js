// The HTTP API under /v1. The token lives in sessionStorage (this tab
// only); a 401 asks for it and tries again.
export const tokenKey = 'quarry.token';
export class APIError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code;
    this.field = e.field;
    this.body = body;
  }
}
export function authHeaders(extra = {}) {
  const t = sessionStorage.getItem(tokenKey);
  return t ? { ...extra, Authorization: `Bearer ${t}` } : extra;
}
export async function api(method, path, body, opts = {}) {
  for (;;) {
    const init = { method, headers: authHeaders(opts.headers || {}) };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    const r = await fetch(path, init);
    if (r.status === 401) {
      await askToken();
      continue;
    }
    if (r.status === 204) return null;
    const ct = r.headers.get('Content-Type') || '';
    const data = ct.includes('json') ? await r.json() : await r.text();
    if (!r.ok) throw new APIError(r.status, data);
    return data;
  }
}
let tokenWait = null;
export function askToken() {
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
      if (r.status === 401) {
        err.hidden = false;
        err.textContent = 'That token is not valid (revoked or mistyped).';
        return;
      }
      sessionStorage.setItem(tokenKey, t);
      input.value = '';
      err.hidden = true;
      dlg.close();
      tokenWait = null;
      resolve();
    };
  });
  dlg.showModal();
  return tokenWait;
}
