// The JSON view of the config: a textarea with line numbers. It only
// edits text; configpanel.js parses it, keeps the form in step and
// validates.

import { h } from './dom.js';

const LINE_HEIGHT_PX = 20; // as in admin.css (.editor textarea.code)

/**
 * @typedef {object} JSONEditor
 * @property {HTMLElement} el
 * @property {() => string} text
 * @property {(text: string) => void} setText replaces the text without calling onInput
 * @property {(line: number) => void} goTo selects a 1-based line and scrolls it into view
 */

/**
 * jsonEditor returns the JSON view; onInput runs after each edit the user
 * makes.
 * @param {string} text
 * @param {() => void} onInput
 * @returns {JSONEditor}
 */
export function jsonEditor(text, onInput) {
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const area = /** @type {HTMLTextAreaElement} */ (h('textarea', {
    class: 'code', spellcheck: 'false', autocomplete: 'off', wrap: 'off',
    'aria-label': 'Agent config (JSON)', 'aria-describedby': 'config-problems',
  }));
  const numberLines = () => {
    const n = area.value.split('\n').length;
    gutter.textContent = Array.from({ length: n }, (_, i) => i + 1).join('\n');
  };
  area.addEventListener('input', () => {
    numberLines();
    onInput();
  });
  area.addEventListener('scroll', () => { gutter.scrollTop = area.scrollTop; });
  area.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab' || e.shiftKey) return; // Shift+Tab still leaves the editor
    e.preventDefault();
    area.setRangeText('  ', area.selectionStart, area.selectionEnd, 'end');
    area.dispatchEvent(new Event('input'));
  });
  const setText = (/** @type {string} */ t) => {
    area.value = t;
    numberLines();
  };
  setText(text);
  return {
    el: h('div', { class: 'editor' }, gutter, area),
    text: () => area.value,
    setText,
    goTo(line) {
      const lines = area.value.split('\n');
      const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
      area.focus();
      area.setSelectionRange(start, start + (lines[line - 1] || '').length);
      area.scrollTop = Math.max(0, (line - 4) * LINE_HEIGHT_PX);
    },
  };
}
