// The request tester of an HTTP tool: sample arguments and context in,
// one real call through the server's outbound client
// (POST /v1/tenants/{tenant}/tools/try), and the request it sent and the
// response it got back, secrets redacted by the server.

import { api, tenantPath } from '../api.js';
import { h, mount, errorBox, busy } from '../dom.js';
import { getIn } from '../configdoc.js';

/**
 * requestTester is the tester of the tool at path.
 * @param {import('./fields.js').FormContext} f
 * @param {import('../configdoc.js').Path} path
 */
export function requestTester(f, path) {
  const tool = getIn(f.doc.get(), path) || {};
  const args = h('textarea', { class: 'mono', rows: 3, spellcheck: 'false', 'aria-label': 'Sample arguments (JSON)', value: JSON.stringify(sampleArguments(tool.parameters), null, 2) });
  const context = h('textarea', { class: 'mono', rows: 2, spellcheck: 'false', 'aria-label': 'Context variables (JSON)', value: JSON.stringify(sampleContext(f.doc.get()), null, 2) });
  const out = h('div', { class: 'trial', 'aria-live': 'polite' });
  const send = h('button', {
    type: 'button', class: 'small',
    onclick: () => busy(send, async () => {
      const body = {
        config: f.doc.get(),
        tool: getIn(f.doc.get(), [...path, 'name']),
        arguments: parse(args.value, 'The sample arguments'),
        context: parse(context.value, 'The context'),
      };
      mount(out, h('p', { class: 'muted' }, 'Sending…'));
      mount(out, trialView(await api('POST', tenantPath(f.tenant, 'tools', 'try'), body)));
      out.scrollIntoView({ block: 'nearest' });
    }).catch((err) => mount(out, errorBox(err))),
  }, 'Send test request');
  // The samples follow the tool's arguments until the author edits them.
  let edited = false;
  args.addEventListener('input', () => { edited = true; });
  context.addEventListener('input', () => { edited = true; });
  const refresh = () => {
    if (edited) return;
    args.value = JSON.stringify(sampleArguments(getIn(f.doc.get(), [...path, 'parameters'])), null, 2);
    context.value = JSON.stringify(sampleContext(f.doc.get()), null, 2);
  };
  return h('details', { class: 'tester', ontoggle: refresh },
    h('summary', null, 'Test the request'),
    h('p', { class: 'muted' }, 'Sends one real request with these arguments, the tenant\'s secrets and the outbound policy, as a dialog would.'),
    h('label', { class: 'field' }, h('span', null, 'Arguments'), args),
    h('label', { class: 'field' }, h('span', null, 'Context variables'), context),
    send, out);
}

/**
 * trialView shows what the tester sent and got.
 * @param {{request: any, response: any, result: {content: string, is_error: boolean, duration_ms: number}}} t
 */
function trialView(t) {
  const headers = (/** @type {{[k: string]: string[]}} */ hs) => Object.entries(hs || {}).map(([k, vs]) => vs.map((v) => `${k}: ${v}`).join('\n')).join('\n');
  return h('div', null,
    t.request ? h('div', { class: 'sent' },
      h('h4', null, 'Request sent'),
      h('pre', { class: 'request' }, `${t.request.method} ${t.request.url}\n${headers(t.request.headers)}${t.request.body ? '\n\n' + t.request.body : ''}`)) : null,
    t.response ? h('div', { class: 'got' },
      h('h4', null, 'Response'),
      h('pre', { class: 'response' }, `HTTP ${t.response.status}\n${headers(t.response.headers)}\n\n${t.response.body}${t.response.truncated ? '\n[cut at the size limit]' : ''}`)) : null,
    h('h4', null, 'What the model reads', ' ', h('span', { class: 'pill ' + (t.result.is_error ? 'bad' : 'ok') }, t.result.is_error ? 'error' : 'ok'), ' ',
      h('span', { class: 'muted' }, `${t.result.duration_ms} ms`)),
    h('pre', { class: 'result' }, t.result.content));
}

/**
 * parse reads a JSON text field; empty is undefined.
 * @param {string} text
 * @param {string} what
 */
function parse(text, what) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} are not valid JSON: ${/** @type {Error} */ (err).message}`);
  }
}

/**
 * sampleArguments fills each argument with a value of its type, as a
 * starting point for the author to edit.
 * @param {any} schema
 */
function sampleArguments(schema) {
  /** @type {{[k: string]: any}} */
  const out = {};
  const samples = /** @type {{[k: string]: any}} */ ({ string: 'example', integer: 1, number: 1, boolean: true, array: [], object: {} });
  for (const [name, prop] of Object.entries(schema?.properties || {})) {
    out[name] = Array.isArray(prop?.enum) && prop.enum.length ? prop.enum[0] : samples[prop?.type] ?? 'example';
  }
  return out;
}

/**
 * sampleContext names the config's context variables, with their defaults.
 * @param {any} config
 */
function sampleContext(config) {
  /** @type {{[k: string]: string}} */
  const out = {};
  for (const v of config?.context_variables || []) {
    if (v?.name) out[v.name] = v.default || '';
  }
  return out;
}
