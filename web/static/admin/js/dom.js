// Small DOM helpers: build elements without innerHTML (so no markup is
// ever parsed from data), and format what the API returns.

/**
 * h builds an element. attrs: "class", "on<event>" listeners, boolean
 * attributes (true/false), "value"/"checked" properties, others as
 * attributes. children: nodes, strings, numbers, arrays; null is skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = el.defaultChecked = v; // so a form reset keeps it
    else el.setAttribute(k, v === true ? '' : v);
  }
  el.append(...flat(children));
  return el;
}

function flat(children) {
  return children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : String(c)));
}

/** mount replaces el's content. */
export function mount(el, ...children) {
  el.replaceChildren(...flat(children));
  return el;
}

/** when formats an API timestamp in the reader's locale. */
export function when(ts) {
  return ts ? new Date(ts).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';
}

/** short formats a timestamp compactly, for narrow tables. */
export function short(ts) {
  return ts ? new Date(ts).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }) : '—';
}

/** json pretty-prints a value (or a JSON string) for display. */
export function json(v) {
  if (typeof v === 'string') {
    try { v = JSON.parse(v); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

/** errorBox shows an API error with each {pointer, message} detail. */
export function errorBox(err) {
  const details = (err.details || []).map((d) =>
    h('li', null, d.pointer ? h('code', null, d.pointer) : null, d.pointer ? ' ' : null, d.message));
  return h('div', { class: 'alert error', role: 'alert' },
    h('strong', null, err.message || String(err)),
    details.length ? h('ul', { class: 'problems' }, details) : null);
}

/** notice shows a short success or info message. */
export function notice(text, kind = 'ok') {
  return h('div', { class: 'alert ' + kind, role: 'status' }, text);
}

/** card wraps a section with a heading. */
export function card(title, ...children) {
  return h('section', { class: 'card' }, title ? h('h2', null, title) : null, ...children);
}

/** field is a labelled form control. */
export function field(label, control, hint) {
  return h('label', { class: 'field' }, h('span', null, label), control, hint ? h('small', null, hint) : null);
}

/** table renders rows under headings; empty shows when there are none. */
export function table(headings, rows, empty) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap' }, h('table', null,
    h('thead', null, h('tr', null, headings.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', null, rows)));
}

/** busy disables a button while fn runs, so a double click sends once. */
export async function busy(button, fn) {
  button.disabled = true;
  try {
    return await fn();
  } finally {
    button.disabled = false;
  }
}

/** actionButton is a small button that runs action once at a time and
 * hands a failure to fail. */
export function actionButton(label, action, fail, kind) {
  return h('button', {
    type: 'button', class: `small ${kind || ''}`.trim(),
    onclick: (e) => busy(e.target, action).catch(fail),
  }, label);
}

/** secretOnce shows a new secret with a copy button: what was made, and
 * that it is not shown again. */
export function secretOnce(secret, what, name = 'signing secret') {
  const copy = (e) => navigator.clipboard.writeText(secret).then(() => { e.target.textContent = 'Copied'; });
  return h('div', { class: 'alert ok once', role: 'status' },
    h('strong', null, `${what}. Copy the ${name} now: it is not shown again.`),
    h('div', { class: 'secret-row' }, h('code', { class: 'new-key' }, secret),
      h('button', { type: 'button', class: 'small', onclick: copy }, 'Copy')));
}
