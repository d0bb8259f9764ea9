// The API client of the admin UI: one fetch wrapper for JSON calls and one
// for event streams. Credentials are either the HttpOnly session cookie
// (set by /v1/auth/login, invisible to scripts) or an API key kept in
// sessionStorage, so it is gone when the tab closes.

const KEY = 'parley.key';
const TENANT = 'parley.tenant';

export const creds = {
  key: () => sessionStorage.getItem(KEY),
  tenant: () => sessionStorage.getItem(TENANT),
  useKey(key, tenant) {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(TENANT, tenant);
  },
  rememberTenant: (tenant) => sessionStorage.setItem(TENANT, tenant),
  clear() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(TENANT);
  },
};

/** An API error: status, stable code, message and {pointer, message} details. */
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `the server answered ${status}`);
    this.status = status;
    this.code = e.code || 'http_' + status;
    this.details = e.details || [];
  }
}

function headers(accept) {
  // The CSRF marker lets cookie-authenticated writes through: another
  // site's form cannot set a custom header.
  const h = { 'Content-Type': 'application/json', 'Accept': accept, 'X-Parley-CSRF': '1' };
  const key = creds.key();
  if (key) h.Authorization = 'Bearer ' + key;
  return h;
}

async function send(method, path, body, accept, signal) {
  const res = await fetch(path, {
    method,
    headers: headers(accept),
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
  if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
  return res;
}

/** api calls a JSON route and returns its decoded answer (null for 204). */
export async function api(method, path, body) {
  const res = await send(method, path, body, 'application/json');
  return res.status === 204 ? null : res.json();
}

/**
 * upload posts a multipart form (a file with its fields) and returns the
 * decoded answer. The browser writes the Content-Type with its boundary.
 * @param {string} path
 * @param {FormData} form
 */
export async function upload(path, form) {
  const h = headers('application/json');
  delete h['Content-Type'];
  const res = await fetch(path, { method: 'POST', headers: h, body: form, credentials: 'same-origin' });
  if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
  return res.json();
}

/** download fetches a route and saves its body as a file named name. */
export async function download(path, name) {
  const res = await send('GET', path, undefined, '*/*');
  const url = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  URL.revokeObjectURL(url);
}

/** tenantPath builds /v1/tenants/{tenant}/... with each part escaped. */
export function tenantPath(tenant, ...parts) {
  return ['/v1/tenants', tenant, ...parts].map((p, i) => (i ? encodeURIComponent(p) : p)).join('/');
}

/**
 * stream posts to a turn route asking for server-sent events and calls
 * onEvent(type, data) for each. EventSource cannot POST or send a bearer
 * key, so this reads the fetch body. A JSON answer (the text was queued
 * behind a reply in progress) is returned instead.
 */
export async function stream(path, body, onEvent, signal) {
  const res = await send('POST', path, body, 'text/event-stream', signal);
  if (!(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) return res.json();
  await readEvents(res.body, onEvent);
  return null;
}

/**
 * follow keeps a GET event stream open until signal aborts: it calls
 * onEvent(type, data) for each event and reconnects after a failure or
 * an end, waiting longer each time (up to 30 s). path(): the route to
 * open now, so a caller can resume where it stopped. A refusal (4xx) ends
 * it: onRefused(err) says why.
 */
export async function follow(path, onEvent, signal, onRefused) {
  let wait = 1000;
  while (!signal.aborted) {
    try {
      const res = await send('GET', path(), undefined, 'text/event-stream', signal);
      wait = 1000;
      await readEvents(res.body, onEvent);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status < 500 && err.status !== 429) {
        if (onRefused) onRefused(err);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(wait * 2, 30000);
  }
}

/** readEvents parses an SSE body: "event:" and "data:" lines, blank-line separated; comments are pings. */
export async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let end;
    while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end).replace(/^\r?\n\r?\n/, '');
      dispatch(frame, onEvent);
    }
  }
  if (buf.trim()) dispatch(buf, onEvent);
}

function dispatch(frame, onEvent) {
  let type = '';
  const data = [];
  for (const line of frame.split(/\r?\n/)) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (!type || !data.length) return;
  try {
    onEvent(type, JSON.parse(data.join('\n')));
  } catch (err) {
    if (err instanceof SyntaxError) return; // a malformed frame is skipped, as EventSource would
    throw err;
  }
}
