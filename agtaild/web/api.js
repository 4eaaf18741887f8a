// The API client: every request the page makes to agtaild goes through here.
//
// Over TCP agtaild wants its token on every request; the viewer has it as the HttpOnly cookie
// the login link set (same origin, so fetch and EventSource send it themselves). A 401 means
// that cookie is gone or no longer valid: callers hand the ApiError to handleError (ui.js),
// which shows the sign-in view.

const API = '/api/v1';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function apiUrl(path, params) {
  const qs = new URLSearchParams();
  if (params) {
    for (const key of Object.keys(params)) {
      const v = params[key];
      if (v !== null && v !== undefined && v !== '') qs.set(key, String(v));
    }
  }
  const q = qs.toString();
  return API + path + (q ? '?' + q : '');
}

export async function api(path, params) {
  return request(apiUrl(path, params), { headers: { Accept: 'application/json' } });
}

// POST a JSON body (a change: state, allowlist); the answer as api() gives it.
export async function postApi(path, body) {
  return request(API + path, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function request(url, init) {
  let res;
  try {
    res = await fetch(url, Object.assign({ credentials: 'same-origin' }, init));
  } catch (err) {
    throw new ApiError(0, 'network', 'agtaild is not answering (' + err.message + ')');
  }
  let body = null;
  try {
    body = await res.json();
  } catch (_) {
    body = null;
  }
  if (!res.ok || !body || body.ok === false) {
    const e = (body && body.error) || {};
    throw new ApiError(res.status, e.code || 'error', e.message || res.status + ' ' + res.statusText);
  }
  return body;
}

export const sessionPath = (agent, id) => '/sessions/' + encodeURIComponent(agent) + '/' + encodeURIComponent(id);

// A Server-Sent Events stream from the API (same origin: the cookie goes with it).
export function stream(path, params) {
  return new EventSource(apiUrl(path, params));
}
