// The form's HTTP tools: what the model may call, the arguments it
// supplies (a table instead of a JSON Schema) and the request the
// platform sends, with a tester that sends one for real.

import { h } from '../dom.js';
import { getIn, pointerOf } from '../configdoc.js';
import { text, number, checkbox, select, pairs, jsonValue, repeat } from './fields.js';
import { requestTester } from './tester.js';
import { secretPicker } from './secretpick.js';

const TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'];

/** @param {import('./fields.js').FormContext} f */
export function httpToolsSection(f) {
  return repeat(f, ['tools'], {
    title: (v) => v?.name ? `Tool ${v.name}` : 'New tool',
    fresh: () => ({ name: '', description: '', parameters: { type: 'object', properties: {} }, endpoint: { url: '', method: 'GET' } }),
    add: '+ Add an HTTP tool',
    empty: 'No HTTP tools.',
    item: (p, v) => {
      const client = v?.execution === 'client';
      return [
        text(f, [...p, 'name'], 'Name', { placeholder: 'save_customer_information' }),
        text(f, [...p, 'description'], 'Description', { rows: 2 }),
        parameters(f, [...p, 'parameters']),
        select(f, [...p, 'execution'], 'Runs on', [['', 'the server: an HTTP request'], ['client', 'the client (widget or API caller)']], { structural: true }),
        client ? null : endpoint(f, [...p, 'endpoint']),
        checkbox(f, [...p, 'requires_confirmation'], 'Ask a human to confirm each call', false),
        checkbox(f, [...p, 'show_to_end_user'], 'Show arguments and results to end users', false),
        number(f, [...p, 'ephemeral'], 'Keep only the last N outputs', { step: '1', placeholder: '0 (all)' }),
        client ? null : requestTester(f, p),
      ].filter((x) => x !== null);
    },
  });
}

/**
 * endpoint edits the request a server tool sends.
 * @param {import('./fields.js').FormContext} f
 * @param {import('../configdoc.js').Path} p
 */
function endpoint(f, p) {
  return h('div', { class: 'subsection', 'data-pointer': pointerOf(p) },
    h('h4', null, 'Request'),
    h('div', { class: 'row' },
      select(f, [...p, 'method'], 'Method', [['', 'default (POST with a body, else GET)'], ['GET', 'GET'], ['POST', 'POST'], ['PUT', 'PUT'], ['PATCH', 'PATCH'], ['DELETE', 'DELETE']]),
      number(f, [...p, 'timeout'], 'Timeout (seconds)', { placeholder: '30' })),
    text(f, [...p, 'url'], 'URL', { placeholder: 'https://crm.example.com/contacts/<email>', hint: 'Use <argument> for what the model supplies, {{variable}} for context, {{secrets.NAME}} for a tenant secret. '
      + 'A private address (localhost, 10.x, 192.168.x) or a port other than 80 and 443 is refused unless the server\'s operator allows it '
      + 'with PARLEY_OUTBOUND_ALLOW and PARLEY_OUTBOUND_PORTS; the request tester names the exact values.' }),
    withSecrets(f, pairs(f, [...p, 'headers'], 'Headers', { keyPlaceholder: 'Authorization', valuePlaceholder: 'Bearer {{secrets.crm_token}}' })),
    pairs(f, [...p, 'query_params'], 'Query parameters', { keyPlaceholder: 'source', valuePlaceholder: '{{channel}}' }),
    jsonValue(f, [...p, 'body'], 'JSON body', { placeholder: '{"email": "<email>"}' }));
}

/**
 * parameters edits a tool's argument schema as a table: name, type,
 * description, required. Other schema keywords of a property (enum,
 * format, ...) and of the schema are kept as they are.
 * @param {import('./fields.js').FormContext} f
 * @param {import('../configdoc.js').Path} path
 */
function parameters(f, path) {
  const schema = getIn(f.doc.get(), path) || { type: 'object', properties: {} };
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const rows = h('tbody');
  /** @type {Map<HTMLElement, any>} */
  const kept = new Map(); // each row's property schema as loaded, for the keywords the table does not show
  const write = () => {
    const current = getIn(f.doc.get(), path) || {};
    /** @type {{[k: string]: any}} */
    const properties = {};
    /** @type {string[]} */
    const req = [];
    for (const tr of /** @type {NodeListOf<HTMLElement>} */ (rows.querySelectorAll('tr'))) {
      const [name, type, desc, must] = /** @type {NodeListOf<HTMLInputElement>} */ (tr.querySelectorAll('input, select'));
      const n = name.value.trim();
      if (!n) continue;
      const prop = { ...(kept.get(tr) || {}), type: type.value };
      if (desc.value) prop.description = desc.value;
      else delete prop.description;
      properties[n] = prop;
      if (must.checked) req.push(n);
    }
    const next = { ...current, type: 'object', properties };
    if (req.length) next.required = req;
    else delete next.required;
    f.doc.edit(path, next);
  };
  const row = (/** @type {string} */ name, /** @type {any} */ prop) => {
    const tr = h('tr', { 'data-pointer': pointerOf([...path, 'properties', name]) },
      h('td', null, h('input', { value: name, placeholder: 'email', 'aria-label': 'Argument name', oninput: write })),
      h('td', null, h('select', { 'aria-label': 'Type', onchange: write }, TYPES.map((t) => h('option', { value: t, selected: t === (prop?.type || 'string') }, t)))),
      h('td', null, h('input', { value: prop?.description || '', placeholder: 'what it is', 'aria-label': 'Argument description', oninput: write })),
      h('td', null, h('input', { type: 'checkbox', checked: required.has(name), 'aria-label': 'Required', onchange: write })),
      h('td', null, h('button', { type: 'button', class: 'small ghost', 'aria-label': 'Remove argument', onclick: () => { tr.remove(); write(); } }, '×')));
    kept.set(tr, prop && typeof prop === 'object' ? prop : {});
    return tr;
  };
  rows.append(...Object.entries(schema.properties || {}).map(([n, p]) => row(n, p)));
  return h('div', { class: 'field params', 'data-pointer': pointerOf(path), role: 'group', 'aria-label': 'Arguments' },
    h('span', null, 'Arguments the model supplies'),
    h('table', { class: 'params' },
      h('thead', null, h('tr', null, ['Name', 'Type', 'Description', 'Required', ''].map((t) => h('th', { scope: 'col' }, t)))),
      rows),
    h('div', null, h('button', {
      type: 'button', class: 'small ghost add-arg',
      onclick: () => { const tr = row('', { type: 'string' }); rows.append(tr); tr.querySelector('input')?.focus(); },
    }, '+ Add an argument')));
}

/**
 * withSecrets puts the secret picker under a headers group.
 * @param {import('./fields.js').FormContext} f
 * @param {HTMLElement} headers
 */
function withSecrets(f, headers) {
  headers.append(secretPicker(f.tenant, headers));
  return headers;
}
