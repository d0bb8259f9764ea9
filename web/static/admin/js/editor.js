// The config editor: a textarea with line numbers that validates as you
// type through POST /v1/validate and lists every problem with its JSON
// pointer. It keeps no copy of the text besides the textarea.

import { api } from './api.js';
import { h, mount } from './dom.js';
import { lineOf } from './pointer.js';

const VALIDATE_DELAY_MS = 350;
const LINE_HEIGHT_PX = 20; // as in admin.css (.editor textarea.code)

/**
 * configEditor returns {el, text, setText, parsed}. onResult receives each
 * validation answer ({valid, errors, prompt, tools}) that is still current.
 */
export function configEditor(text, onResult) {
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const area = h('textarea', {
    class: 'code', spellcheck: 'false', autocomplete: 'off', wrap: 'off',
    'aria-label': 'Agent config (JSON)', 'aria-describedby': 'config-problems',
  });
  const status = h('span', { class: 'pill', role: 'status' }, '');
  const problems = h('ul', { class: 'problems', id: 'config-problems', 'aria-live': 'polite' });
  let timer = 0;
  let seq = 0;

  const numberLines = () => {
    const n = area.value.split('\n').length;
    gutter.textContent = Array.from({ length: n }, (_, i) => i + 1).join('\n');
  };
  const show = (result) => {
    status.className = 'pill ' + (result.valid ? 'ok' : 'bad');
    status.textContent = result.valid
      ? `Valid · ${(result.tools || []).length} tool${(result.tools || []).length === 1 ? '' : 's'}`
      : `${result.errors.length} problem${result.errors.length === 1 ? '' : 's'}`;
    mount(problems, (result.errors || []).map((d) => {
      const line = d.pointer && result.parsed ? lineOf(area.value, d.pointer) : 0;
      return h('li', null,
        line ? h('button', { type: 'button', class: 'link', onclick: () => goTo(line) }, `line ${line}`) : null,
        line ? ' ' : null, h('code', null, d.pointer || '/'), ' ', d.message);
    }));
    onResult(result);
  };
  // goTo selects a line and scrolls it into view.
  const goTo = (line) => {
    const lines = area.value.split('\n');
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    area.focus();
    area.setSelectionRange(start, start + lines[line - 1].length);
    area.scrollTop = Math.max(0, (line - 4) * LINE_HEIGHT_PX);
  };
  const validate = async () => {
    const mine = ++seq;
    let config;
    try {
      config = JSON.parse(area.value);
    } catch (err) {
      show({ valid: false, errors: [{ pointer: '', message: 'not valid JSON: ' + err.message }] });
      return;
    }
    status.className = 'pill';
    status.textContent = 'Checking…';
    try {
      const result = await api('POST', '/v1/validate', { config });
      if (mine === seq) show({ ...result, parsed: true }); // a later edit's answer wins
    } catch (err) {
      if (mine === seq) show({ valid: false, errors: [{ pointer: '', message: err.message }] });
    }
  };

  area.addEventListener('input', () => {
    numberLines();
    clearTimeout(timer);
    timer = setTimeout(validate, VALIDATE_DELAY_MS);
  });
  area.addEventListener('scroll', () => { gutter.scrollTop = area.scrollTop; });
  area.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab' || e.shiftKey) return; // Shift+Tab still leaves the editor
    e.preventDefault();
    area.setRangeText('  ', area.selectionStart, area.selectionEnd, 'end');
    area.dispatchEvent(new Event('input'));
  });

  const setText = (t) => {
    area.value = t;
    numberLines();
    validate();
  };
  setText(text);

  return {
    el: h('div', { class: 'editor-wrap' },
      h('div', { class: 'editor' }, gutter, area),
      h('div', { class: 'editor-status' }, status),
      problems),
    text: () => area.value,
    setText,
  };
}
