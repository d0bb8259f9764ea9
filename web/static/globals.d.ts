// Types of the globals the widget and the Markdown renderer share with the
// page (docs/widget.md), for `make typecheck`. Not served.

/** window.Parley: the page's hooks, the widget's controls and the renderer. */
interface ParleyGlobal {
  /** Set once a widget has mounted, so a snippet pasted twice mounts one. */
  mounted?: boolean;
  /** markdown.js: safe Markdown to DOM. */
  markdown?: {
    render(src: string): DocumentFragment;
    renderInto(target: Element, src: string): Element;
    safeURL(raw: string): string | false;
  };
  /** The page runs client tools the bot calls. */
  onClientTool?: (name: string, args: unknown) => unknown;
  open?: () => void;
  close?: () => void;
  send?: (text: string) => void;
  setUserToken?: (token: string) => void;
}

interface Window {
  Parley?: ParleyGlobal;
}

declare var Parley: ParleyGlobal | undefined;
