// The form's native tools: the platform's built-in tools, switched on by
// name. An entry with options ({"name", "ephemeral"}) keeps them.

import { h } from '../dom.js';
import { pointerOf } from '../configdoc.js';
import { inputOf } from './fields.js';

/** The built-in tools every server has (docs/agent-config.md). */
const BUILT_IN = [
  ['current_time', 'Tells the date and time'],
  ['handoff_to_human', 'Hands the dialog to a human operator'],
  ['end_dialog', 'Ends the dialog'],
  ['remember', 'Stores a fact for later in the dialog'],
  ['recall', 'Reads a stored fact back'],
];

/** @param {import('./fields.js').FormContext} f */
export function nativesSection(f) {
  const entries = () => /** @type {any[]} */ (f.doc.get()?.native_tools || []);
  const nameOf = (/** @type {any} */ e) => (typeof e === 'string' ? e : e?.name);
  const enabled = new Set(entries().map(nameOf));
  const others = entries().map(nameOf).filter((n) => !BUILT_IN.some(([b]) => b === n));
  const toggle = (/** @type {string} */ name) => (/** @type {Event} */ e) => {
    const rest = entries().filter((x) => nameOf(x) !== name);
    const next = inputOf(e).checked ? [...entries().filter((x) => nameOf(x) !== name), name] : rest;
    f.doc.edit(['native_tools'], next.length ? next : undefined);
  };
  const row = (/** @type {string} */ name, /** @type {string} */ what) => {
    const i = entries().findIndex((x) => nameOf(x) === name);
    return h('label', { class: 'field check', 'data-pointer': i >= 0 ? pointerOf(['native_tools', i]) : null },
      h('span', null, h('input', { type: 'checkbox', name: 'native:' + name, checked: enabled.has(name), onchange: toggle(name) }), ' ', h('code', null, name)),
      h('small', null, what));
  };
  return h('div', { class: 'natives', 'data-pointer': '/native_tools' },
    BUILT_IN.map(([n, what]) => row(n, what)),
    others.map((n) => row(n, 'Registered by the platform operator')));
}
