// The config panel of a bot's page: a form view and a JSON view of one
// config object (configdoc.js), kept in step, validated as you type
// through POST /v1/validate (for the tenant, so the providers and models
// the config names are checked as saving would), with every problem listed
// by JSON pointer and linked both to its form field and to its JSON line.
// Warnings (a model its provider does not list) are shown the same way,
// marked apart from errors: they do not stop a save.

import { api } from './api.js';
import { h, mount } from './dom.js';
import { lineOf } from './pointer.js';
import { configDoc } from './configdoc.js';
import { syntaxError } from './jsonerror.js';
import { jsonEditor } from './editor.js';
import { configForm } from './form/form.js';
import { agentSchema } from './schema.js';

const VALIDATE_DELAY_MS = 350;
const VIEW_KEY = 'parley.configView';

/**
 * @typedef {object} ValidateResult
 * @property {boolean} valid
 * @property {{pointer: string, message: string}[]} errors
 * @property {{pointer: string, message: string}[]} [warnings] do not make the config invalid
 * @property {string} [prompt]
 * @property {any[]} [tools]
 * @property {boolean} [parsed] the text was JSON, so pointers can be found in it
 * @property {import('./configdoc.js').SyntaxProblem} [syntax] the text is not JSON: why and where
 */

/**
 * configPanel returns {el, text, setText}. onResult receives each
 * validation answer that is still current; onEdit runs after each edit
 * in either view (not after setText).
 * @param {string} tenant
 * @param {string} text
 * @param {(result: ValidateResult) => void} onResult
 * @param {() => void} [onEdit]
 */
export async function configPanel(tenant, text, onResult, onEdit) {
  const schema = await agentSchema();
  const doc = configDoc(parseOrUndefined(text));
  let view = localStorage.getItem(VIEW_KEY) === 'json' ? 'json' : 'form';
  const status = h('span', { class: 'pill', role: 'status' }, '');
  const problems = h('ul', { class: 'problems', id: 'config-problems', 'aria-live': 'polite' });
  let timer = 0;
  let seq = 0;

  const editor = jsonEditor(text, () => {
    const t = editor.text();
    const problem = syntaxError(t);
    if (problem) doc.break(problem);
    else doc.replace(JSON.parse(t), 'json');
  }, () => schema);
  const form = configForm(doc, tenant, schema, () => view === 'form');

  let loading = false;
  doc.subscribe((source) => {
    clearTimeout(timer);
    if (onEdit && source !== 'load' && !loading) onEdit();
    if (doc.broken()) {
      // Said at once, and an answer still on its way for the text before
      // is dropped: it would call the broken text valid.
      validate();
      return;
    }
    if (source !== 'json' && source !== 'load') editor.setText(JSON.stringify(doc.get(), null, 2));
    timer = setTimeout(validate, VALIDATE_DELAY_MS);
  });

  const formPane = h('div', { class: 'pane form-pane' }, form.el);
  const jsonPane = h('div', { class: 'pane json-pane' }, editor.el);
  const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Config view' });
  const show = (/** @type {string} */ v) => {
    view = v;
    localStorage.setItem(VIEW_KEY, v);
    formPane.hidden = v !== 'form';
    jsonPane.hidden = v !== 'json';
    if (v === 'form') form.show();
    mount(tabs, [['form', 'Form'], ['json', 'JSON']].map(([id, label]) =>
      h('button', { type: 'button', role: 'tab', class: 'tab', 'data-view': id, 'aria-selected': String(id === v), onclick: () => show(id) }, label)));
  };

  /** @param {ValidateResult} result */
  const showResult = (result) => {
    const n = (result.tools || []).length;
    const warnings = result.warnings || [];
    const w = warnings.length ? ` · ${warnings.length} warning${warnings.length === 1 ? '' : 's'}` : '';
    status.className = 'pill ' + (!result.valid ? 'bad' : warnings.length ? 'warn' : 'ok');
    status.textContent = result.syntax ? `JSON syntax error at line ${result.syntax.line}`
      : result.valid ? `Valid · ${n} tool${n === 1 ? '' : 's'}${w}`
        : `${result.errors.length} problem${result.errors.length === 1 ? '' : 's'}`;
    const text = editor.text();
    /** @param {{pointer: string, message: string}} d @param {boolean} warning */
    const item = (d, warning) => {
      const line = result.syntax ? result.syntax.line : result.parsed ? lineOf(text, d.pointer || '') : 0;
      return h('li', { class: warning ? 'warning' : 'error' },
        warning ? h('span', { class: 'badge warn' }, 'warning') : null,
        warning ? ' ' : null,
        line ? h('button', { type: 'button', class: 'link', onclick: () => { show('json'); editor.goTo(line); } }, `line ${line}`) : null,
        line ? ' ' : null,
        h('button', { type: 'button', class: 'link pointer', title: 'Show the field in the form', onclick: () => { show('form'); form.focus(d.pointer || ''); } },
          h('code', null, d.pointer || '/')),
        ' ', d.message);
    };
    mount(problems, [...(result.errors || []).map((d) => item(d, false)), ...warnings.map((d) => item(d, true))]);
    /** @param {{pointer: string, message: string}} d @param {boolean} warning */
    const mark = (d, warning) => ({
      line: result.syntax ? result.syntax.line : result.parsed ? lineOf(text, d.pointer || '') : 0,
      message: `${d.pointer || '/'}: ${d.message}`, warning,
    });
    editor.markProblems([...(result.errors || []).map((d) => mark(d, false)), ...warnings.map((d) => mark(d, true))]);
    form.setProblems(result.parsed ? result.errors || [] : [], result.parsed ? warnings : []);
    onResult(result);
  };

  const validate = async () => {
    const mine = ++seq;
    const config = doc.get();
    const syntax = doc.broken();
    if (syntax) {
      showResult({ valid: false, syntax, errors: [{ pointer: '', message: 'not valid JSON: ' + syntax.message }] });
      return;
    }
    status.className = 'pill';
    status.textContent = 'Checking…';
    try {
      const result = await api('POST', '/v1/validate', { config, tenant });
      if (mine === seq) showResult({ ...result, parsed: true }); // a later edit's answer wins
    } catch (err) {
      if (mine === seq) showResult({ valid: false, errors: [{ pointer: '', message: /** @type {Error} */ (err).message }] });
    }
  };

  /** setText loads a config's text (a saved version) into both views. */
  const setText = (/** @type {string} */ t) => {
    editor.setText(t);
    const problem = syntaxError(t);
    loading = true;
    if (problem) doc.break(problem);
    else doc.replace(JSON.parse(t), 'load');
    loading = false;
  };
  show(view);
  validate();

  return {
    // The status and the problems come before the panes, so they are in
    // view while editing, not below a long form.
    el: h('div', { class: 'editor-wrap' }, tabs,
      h('div', { class: 'editor-status' }, status), problems, formPane, jsonPane),
    text: () => editor.text(),
    setText,
  };
}

/** @param {string} text */
function parseOrUndefined(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
