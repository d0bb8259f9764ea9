// The JSON view of the config: CodeMirror 6 (vendored, see
// scripts/build-codemirror.sh) with JSON highlighting, bracket matching,
// search, history and completion from the agent config's schema. It only
// edits text; configpanel.js parses it, keeps the form in step and
// validates.

import {
  EditorView, EditorState, EditorSelection, Annotation, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, defaultKeymap, history, historyKeymap, indentWithTab, syntaxHighlighting, defaultHighlightStyle,
  bracketMatching, foldGutter, foldKeymap, indentOnInput, autocompletion, completionKeymap, closeBrackets,
  closeBracketsKeymap, searchKeymap, highlightSelectionMatches, json, setDiagnostics, lintGutter,
} from '../../vendor/codemirror.js';
import { h } from './dom.js';
import { schemaCompletion } from './jsoncomplete.js';

/** The editor's look, in its shadow root (see jsonEditor). */
const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '13px', backgroundColor: '#fff' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', lineHeight: '20px' },
  '.cm-gutters': { backgroundColor: '#eef1f5', color: '#8a94a3', borderRight: '0' },
  '.cm-tooltip.cm-completionInfo': { maxWidth: '360px', whiteSpace: 'normal', fontFamily: 'system-ui, sans-serif' },
});

/** Marks the transactions of setText, which are not the user's edits. */
const loading = Annotation.define();

/**
 * @typedef {object} JSONEditor
 * @property {HTMLElement} el
 * @property {() => string} text
 * @property {(text: string) => void} setText replaces the text without calling onInput
 * @property {(line: number) => void} goTo selects a 1-based line and scrolls it into view
 * @property {(marks: LineProblem[]) => void} markProblems marks each problem in the gutter at its line
 */

/**
 * @typedef {object} LineProblem
 * @property {number} line 1-based
 * @property {string} message
 * @property {boolean} warning
 */

/**
 * jsonEditor returns the JSON view; onInput runs after each edit the user
 * makes.
 * @param {string} text
 * @param {() => void} onInput
 * @param {() => import('./schema.js').Schema|null} schema for completion
 * @returns {JSONEditor}
 */
export function jsonEditor(text, onInput, schema) {
  const el = h('div', { class: 'editor code-editor' });
  // CodeMirror styles itself with <style> elements in a document, which
  // the admin UI's Content-Security-Policy (no inline styles) refuses; in
  // a shadow root it uses constructed style sheets, which CSP allows.
  const shadow = el.attachShadow({ mode: 'open' });
  const view = new EditorView({
    parent: shadow,
    root: shadow,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(), lintGutter(), highlightActiveLineGutter(), foldGutter(), history(), drawSelection(), indentOnInput(),
        bracketMatching(), closeBrackets(), highlightActiveLine(), highlightSelectionMatches(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        json(),
        theme,
        // The list opens as a key or value is typed (a quote or a letter;
        // the source offers nothing at an empty place unless asked) and on
        // Ctrl-Space.
        autocompletion({ override: [schemaCompletion(schema)], activateOnTyping: true }),
        EditorState.tabSize.of(2),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap, ...completionKeymap, indentWithTab]),
        EditorView.contentAttributes.of({ 'aria-label': 'Agent config (JSON)' }),
        EditorView.updateListener.of((/** @type {any} */ u) => {
          if (!u.docChanged || u.transactions.some((/** @type {any} */ t) => t.annotation(loading))) return;
          onInput();
        }),
      ],
    }),
  });
  return {
    el,
    text: () => view.state.doc.toString(),
    setText(t) {
      if (t === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: t }, annotations: loading.of(true) });
    },
    markProblems(marks) {
      const doc = view.state.doc;
      const diagnostics = marks.filter((m) => m.line >= 1 && m.line <= doc.lines).map((m) => {
        const l = doc.line(m.line);
        return { from: l.from, to: l.to, severity: /** @type {'error'|'warning'} */ (m.warning ? 'warning' : 'error'), message: m.message };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    goTo(line) {
      const l = view.state.doc.line(Math.max(1, Math.min(line, view.state.doc.lines)));
      view.dispatch({ selection: EditorSelection.range(l.from, l.to), scrollIntoView: true });
      view.focus();
    },
  };
}
