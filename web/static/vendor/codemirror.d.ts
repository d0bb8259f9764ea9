// Types of the bundled CodeMirror 6 module (codemirror.js, built by
// scripts/build-codemirror.sh) for `make typecheck`: the admin UI uses a
// few entry points, typed loosely here rather than shipping CodeMirror's
// own declarations.
export const EditorView: any;
export const EditorState: any;
export const EditorSelection: any;
export const Annotation: any;
export const keymap: any;
export function lineNumbers(...a: any[]): any;
export function highlightActiveLine(...a: any[]): any;
export function highlightActiveLineGutter(...a: any[]): any;
export function drawSelection(...a: any[]): any;
export function placeholder(...a: any[]): any;
export const defaultKeymap: any[];
export function history(...a: any[]): any;
export const historyKeymap: any[];
export const indentWithTab: any;
export function syntaxHighlighting(...a: any[]): any;
export const defaultHighlightStyle: any;
export function bracketMatching(...a: any[]): any;
export function foldGutter(...a: any[]): any;
export const foldKeymap: any[];
export function indentOnInput(...a: any[]): any;
export function autocompletion(...a: any[]): any;
export const completionKeymap: any[];
export function closeBrackets(...a: any[]): any;
export const closeBracketsKeymap: any[];
export function startCompletion(view: any): boolean;
export const searchKeymap: any[];
export function highlightSelectionMatches(...a: any[]): any;
export function json(): any;
export function completionStatus(state: any): "active" | "pending" | null;
export function setDiagnostics(state: any, diagnostics: {from: number, to: number, severity: "error" | "warning" | "info", message: string}[]): any;
export function lintGutter(...a: any[]): any;
