// What the admin UI's JSON editor uses of CodeMirror 6, bundled into one
// ES module (web/static/vendor/codemirror.js) by scripts/build-codemirror.sh.
// The lint part marks the config's problems in the gutter at their line.
export { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, placeholder } from '@codemirror/view';
export { EditorState, EditorSelection, Annotation } from '@codemirror/state';
export { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
export { syntaxHighlighting, defaultHighlightStyle, bracketMatching, foldGutter, foldKeymap, indentOnInput } from '@codemirror/language';
export { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap, startCompletion, completionStatus } from '@codemirror/autocomplete';
export { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
export { json } from '@codemirror/lang-json';
export { setDiagnostics, lintGutter } from '@codemirror/lint';
