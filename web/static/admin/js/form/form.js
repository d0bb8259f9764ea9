// The form editor: the config as sections of labelled fields, for people
// who do not write JSON. It edits the same config object as the JSON view
// (configdoc.js), redraws when that object is replaced or restructured,
// and marks the fields validation problems (and, apart from them,
// warnings) point at.

import { h, mount } from '../dom.js';
import { basicSection } from './basic.js';
import { playbookSection } from './playbook.js';
import { httpToolsSection } from './httptools.js';
import { mcpSection } from './mcp.js';
import { nativesSection } from './natives.js';
import { contextSection } from './contextvars.js';
import { modelSection } from './model.js';
import { knowledgeSection } from './knowledge.js';
import { guardrailsSection } from './guardrails.js';

/** @typedef {import('../configdoc.js').ConfigDoc} ConfigDoc */
/** @typedef {{pointer: string, message: string}} Problem */

/** The sections in the order an author fills them in. */
/** Each: id, title, the config's top-level fields it covers, its fields. */
const SECTIONS = /** @type {const} */ ([
  ['basic', 'Basic settings', 'basic_settings', basicSection],
  ['action_books', 'Action books', 'action_books', playbookSection],
  ['tools', 'HTTP tools', 'tools', httpToolsSection],
  ['mcp_servers', 'MCP servers', 'mcp_servers', mcpSection],
  ['native_tools', 'Native tools', 'native_tools', nativesSection],
  ['context_variables', 'Context variables', 'context_variables', contextSection],
  ['knowledge', 'Knowledge', 'knowledge', knowledgeSection],
  ['model', 'Model and limits', 'llm runtime', modelSection],
  ['guardrails', 'Guardrails', 'guardrails', guardrailsSection],
]);

/**
 * configForm draws the form for doc. visible says whether the form is on
 * screen: a hidden form redraws when shown, not on every JSON keystroke.
 * @param {ConfigDoc} doc
 * @param {string} tenant
 * @param {import('../schema.js').Schema|null} schema
 * @param {() => boolean} visible
 */
export function configForm(doc, tenant, schema, visible) {
  const root = h('div', { class: 'config-form' });
  const f = { doc, tenant, schema };
  /** @type {Set<string>} */
  const open = new Set(['basic']);
  /** @type {Problem[]} */
  let problems = [];
  /** @type {Problem[]} */
  let warnings = [];
  let stale = true;

  const draw = () => {
    stale = false;
    const scroll = root.scrollTop;
    // Sections stay open or closed across a redraw. Read from the page, not
    // from toggle events, which arrive after a redraw that follows at once.
    for (const d of /** @type {NodeListOf<HTMLDetailsElement>} */ (root.querySelectorAll('details.form-section'))) {
      if (d.open) open.add(d.dataset.section || '');
      else open.delete(d.dataset.section || '');
    }
    const broken = doc.broken();
    // While the JSON does not parse, the form shows the config as it last
    // parsed and takes no edits: one would rewrite the JSON from that
    // config and erase everything typed since.
    const from = broken ? { ...f, doc: { ...doc, get: doc.last, edit: () => {} } } : f;
    const sections = SECTIONS.map(([id, title, covers, section]) =>
      h('details', { class: 'form-section', 'data-section': id, 'data-covers': covers, open: open.has(id) },
        h('summary', null, title), h('div', { class: 'section-body' }, section(from))));
    mount(root, broken
      ? [h('div', { class: 'alert error', role: 'alert' }, `Read-only: the JSON has a syntax error at line ${broken.line}; fix it in the JSON tab.`),
        h('fieldset', { class: 'read-only', disabled: true, inert: true }, sections)]
      : sections);
    root.scrollTop = scroll;
    if (!broken) mark();
  };

  // mark shows each problem and warning at its field (or the nearest
  // enclosing one).
  const mark = () => {
    for (const el of root.querySelectorAll('.invalid, .warned')) el.classList.remove('invalid', 'warned');
    for (const el of root.querySelectorAll('small.field-problem, small.field-warning')) el.remove();
    for (const [list, cls, note] of /** @type {const} */ ([[problems, 'invalid', 'field-problem'], [warnings, 'warned', 'field-warning']])) {
      for (const p of list) {
        const el = fieldOf(p.pointer);
        if (!el) continue;
        el.classList.add(cls);
        el.append(h('small', { class: note }, p.message));
      }
    }
  };

  // fieldOf finds the field at pointer, or the nearest enclosing one: a
  // missing or unknown field points at its parent, at worst its section.
  /**
   * @param {string} pointer
   * @returns {HTMLElement|null}
   */
  const fieldOf = (pointer) => {
    for (let p = pointer; p !== ''; p = p.slice(0, p.lastIndexOf('/'))) {
      const el = root.querySelector(`[data-pointer="${CSS.escape(p)}"]`);
      if (el) return /** @type {HTMLElement} */ (el);
    }
    const top = pointer.split('/')[1];
    return top ? root.querySelector(`[data-covers~="${CSS.escape(top)}"]`) : null;
  };

  doc.subscribe((source) => {
    if (source === 'form') return; // the form already shows it
    stale = true;
    if (visible()) draw();
  });

  return {
    el: root,
    /** show redraws a form that changed while hidden. */
    show() {
      if (stale) draw();
    },
    /**
     * setProblems marks the fields of errors and, apart from them, of
     * warnings (which do not stop a save).
     * @param {Problem[]} list
     * @param {Problem[]} [warned]
     */
    setProblems(list, warned = []) {
      problems = list;
      warnings = warned;
      if (!stale) mark();
    },
    /**
     * focus opens the section of the field at pointer, scrolls it into view
     * and puts the cursor in it; false when the form has no such field.
     * @param {string} pointer
     */
    focus(pointer) {
      if (stale) draw();
      const el = fieldOf(pointer);
      if (!el) return false;
      for (let d = el.closest('details'); d; d = d.parentElement && d.parentElement.closest('details')) d.open = true;
      el.scrollIntoView({ block: 'center' });
      const control = /** @type {HTMLElement|null} */ (el.matches('input, select, textarea') ? el : el.querySelector('input, select, textarea'));
      (control || el).focus();
      return true;
    },
  };
}
