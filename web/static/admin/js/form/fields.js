// The form's controls, each bound to one place in the config: it shows
// the value there, writes every edit back through the config doc, carries
// the place's JSON pointer (so a validation problem finds it) and takes
// its hint from the schema's description.

import { h } from '../dom.js';
import { getIn, pointerOf } from '../configdoc.js';
import { schemaAt } from '../schema.js';

/** @typedef {import('../configdoc.js').Path} Path */
/** @typedef {import('../configdoc.js').ConfigDoc} ConfigDoc */

/**
 * @typedef {object} FormContext
 * @property {ConfigDoc} doc the config both views edit
 * @property {import('../schema.js').Schema|null} schema for hints
 * @property {string} tenant for the request tester
 */

/**
 * @typedef {object} FieldOptions
 * @property {string} [hint] shown under the control; default: the schema's description
 * @property {string} [placeholder]
 * @property {number} [rows] a multi-line text area of this many rows
 */

/**
 * wrap labels a control and marks it with its pointer.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {Node} control
 * @param {string|undefined} hint
 */
function wrap(f, path, label, control, hint) {
  const text = hint === undefined ? schemaAt(f.schema, path)?.description : hint;
  return h('label', { class: 'field', 'data-pointer': pointerOf(path) }, h('span', null, label), control,
    text ? h('small', null, text) : null);
}

/**
 * text edits a string; an empty one removes the field (every optional
 * string has a default).
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {FieldOptions} [opts]
 */
export function text(f, path, label, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const control = h(opts.rows ? 'textarea' : 'input', {
    value: typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value),
    placeholder: opts.placeholder || null, rows: opts.rows || null, spellcheck: opts.rows ? 'true' : 'false',
    oninput: (/** @type {Event} */ e) => f.doc.edit(path, inputOf(e).value === '' ? undefined : inputOf(e).value),
  });
  return wrap(f, path, label, control, opts.hint);
}

/**
 * number edits a number; empty removes it, so the default applies.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {FieldOptions & {step?: string}} [opts]
 */
export function number(f, path, label, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const control = h('input', {
    type: 'number', step: opts.step || 'any', value: value === undefined ? '' : String(value), placeholder: opts.placeholder || null,
    oninput: (/** @type {Event} */ e) => {
      const raw = inputOf(e).value;
      f.doc.edit(path, raw === '' || Number.isNaN(Number(raw)) ? undefined : Number(raw));
    },
  });
  return wrap(f, path, label, control, opts.hint);
}

/**
 * checkbox edits a boolean whose default is def; the default is written
 * by leaving the field out.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {boolean} def
 * @param {FieldOptions} [opts]
 */
export function checkbox(f, path, label, def, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const box = h('input', {
    type: 'checkbox', checked: value === undefined ? def : Boolean(value),
    onchange: (/** @type {Event} */ e) => {
      const on = inputOf(e).checked;
      f.doc.edit(path, on === def ? undefined : on);
    },
  });
  const hint = opts.hint === undefined ? schemaAt(f.schema, path)?.description : opts.hint;
  return h('label', { class: 'field check', 'data-pointer': pointerOf(path) },
    h('span', null, box, ' ', label), hint ? h('small', null, hint) : null);
}

/**
 * select picks one of options ([value, label] pairs); the value '' stands
 * for "leave it out" (the default).
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {[string, string][]} options
 * @param {FieldOptions & {structural?: boolean}} [opts] structural: the form redraws (other fields depend on it)
 */
export function select(f, path, label, options, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const known = options.some(([v]) => v === (value ?? ''));
  const control = h('select', {
    onchange: (/** @type {Event} */ e) => {
      const v = inputOf(e).value;
      f.doc.edit(path, v === '' ? undefined : v, opts.structural ? 'structure' : 'form');
    },
  },
  options.map(([v, l]) => h('option', { value: v, selected: v === (value ?? '') }, l)),
  known ? null : h('option', { value: String(value), selected: true }, String(value)));
  return wrap(f, path, label, control, opts.hint);
}

/**
 * list edits an array of strings, one per line.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {FieldOptions} [opts]
 */
export function list(f, path, label, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const control = h('textarea', {
    rows: opts.rows || 2, spellcheck: 'false', placeholder: opts.placeholder || null,
    value: Array.isArray(value) ? value.join('\n') : '',
    oninput: (/** @type {Event} */ e) => {
      const items = inputOf(e).value.split('\n').map((s) => s.trim()).filter(Boolean);
      f.doc.edit(path, items.length ? items : undefined);
    },
  });
  return wrap(f, path, label, control, opts.hint ?? ((schemaAt(f.schema, path)?.description || '') + ' One per line.').trim());
}

/**
 * picks edits an array of names chosen from options, one checkbox each, so
 * nobody types a name that does not exist. A name the config holds that is
 * not among the options stays, checked and marked unknown, until unticked.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {string[]} options
 * @param {FieldOptions & {empty?: string}} [opts] empty: said when there is nothing to pick
 */
export function picks(f, path, label, options, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const chosen = Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
  const names = [...options, ...chosen.filter((c) => !options.includes(c))];
  const boxes = names.map((name) => h('input', { type: 'checkbox', value: name, checked: chosen.includes(name), onchange: write }));
  function write() {
    const picked = boxes.filter((b) => b.checked).map((b) => b.value);
    f.doc.edit(path, picked.length ? picked : undefined);
  }
  const hint = opts.hint === undefined ? schemaAt(f.schema, path)?.description : opts.hint;
  return h('fieldset', { class: 'field picks', 'data-pointer': pointerOf(path) }, h('legend', null, label),
    names.length ? boxes.map((box, i) => h('label', { class: 'pick' }, box, ' ', h('code', null, names[i]),
      options.includes(names[i]) ? null : h('span', { class: 'badge warn' }, 'unknown')))
      : h('p', { class: 'muted' }, opts.empty || 'Nothing to choose from yet.'),
    hint ? h('small', null, hint) : null);
}

/**
 * pairs edits an object of strings (headers, query parameters, env) as
 * rows of name and value.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {FieldOptions & {keyPlaceholder?: string, valuePlaceholder?: string}} [opts]
 */
export function pairs(f, path, label, opts = {}) {
  const value = getIn(f.doc.get(), path) || {};
  const rows = h('div', { class: 'pairs' });
  const write = () => {
    /** @type {{[k: string]: string}} */
    const out = {};
    for (const row of rows.querySelectorAll('.pair')) {
      const [k, v] = /** @type {NodeListOf<HTMLInputElement>} */ (row.querySelectorAll('input'));
      if (k.value.trim()) out[k.value.trim()] = v.value;
    }
    f.doc.edit(path, Object.keys(out).length ? out : undefined);
  };
  const row = (/** @type {string} */ k, /** @type {string} */ v) => {
    const el = h('div', { class: 'pair', 'data-pointer': pointerOf([...path, k]) },
      h('input', { value: k, placeholder: opts.keyPlaceholder || 'name', 'aria-label': label + ': name', oninput: write }),
      h('input', { value: v, placeholder: opts.valuePlaceholder || 'value', 'aria-label': label + ': value', oninput: write }),
      h('button', { type: 'button', class: 'small ghost', 'aria-label': 'Remove', onclick: () => { el.remove(); write(); } }, '×'));
    return el;
  };
  rows.append(...Object.entries(value).map(([k, v]) => row(k, typeof v === 'string' ? v : JSON.stringify(v))));
  const add = h('button', { type: 'button', class: 'small ghost', onclick: () => { const r = row('', ''); rows.append(r); r.querySelector('input')?.focus(); } }, '+ Add');
  const hint = opts.hint === undefined ? schemaAt(f.schema, path)?.description : opts.hint;
  return h('div', { class: 'field', 'data-pointer': pointerOf(path), role: 'group', 'aria-label': label },
    h('span', null, label), rows, h('div', null, add), hint ? h('small', null, hint) : null);
}

/**
 * jsonValue edits any JSON value (an endpoint's body) as text; text that
 * does not parse is flagged and not written.
 * @param {FormContext} f
 * @param {Path} path
 * @param {string} label
 * @param {FieldOptions} [opts]
 */
export function jsonValue(f, path, label, opts = {}) {
  const value = getIn(f.doc.get(), path);
  const note = h('small', { class: 'problem', 'aria-live': 'polite' });
  const control = h('textarea', {
    class: 'mono', rows: opts.rows || 4, spellcheck: 'false', placeholder: opts.placeholder || null,
    value: value === undefined ? '' : JSON.stringify(value, null, 2),
    oninput: (/** @type {Event} */ e) => {
      const raw = inputOf(e).value;
      if (raw.trim() === '') {
        note.textContent = '';
        f.doc.edit(path, undefined);
        return;
      }
      try {
        const parsed = JSON.parse(raw);
        note.textContent = '';
        f.doc.edit(path, parsed);
      } catch (err) {
        note.textContent = 'Not valid JSON yet: ' + /** @type {Error} */ (err).message;
      }
    },
  });
  const el = wrap(f, path, label, control, opts.hint);
  el.append(note);
  return el;
}

/**
 * repeat edits an array of objects: each item in its own box with a remove
 * button, and a button that adds a new one. Adding or removing redraws the
 * form (pointers of later items change).
 * @param {FormContext} f
 * @param {Path} path
 * @param {{item: (path: Path, value: any) => Node[], title: (value: any, i: number) => string, fresh: () => any, add: string, empty: string}} spec
 */
export function repeat(f, path, spec) {
  const items = getIn(f.doc.get(), path);
  const arr = Array.isArray(items) ? items : [];
  const boxes = arr.map((value, i) => h('fieldset', { class: 'item', 'data-pointer': pointerOf([...path, i]) },
    h('legend', null, spec.title(value, i)),
    h('button', {
      type: 'button', class: 'small danger remove', 'aria-label': `Remove ${spec.title(value, i)}`,
      onclick: () => f.doc.edit([...path, i], undefined, 'structure'),
    }, 'Remove'),
    spec.item([...path, i], value)));
  return h('div', { class: 'repeat', 'data-pointer': pointerOf(path) },
    arr.length ? boxes : h('p', { class: 'empty' }, spec.empty),
    h('button', {
      type: 'button', class: 'small add',
      onclick: () => f.doc.edit(path, [...arr, spec.fresh()], 'structure'),
    }, spec.add));
}

/**
 * inputOf is the form control an event came from.
 * @param {Event} e
 */
export function inputOf(e) {
  return /** @type {HTMLInputElement} */ (e.target);
}
