// Autosave of a bot's config: what the signed-in person types is kept on
// the server as their draft (GET|PUT|DELETE .../bots/{bot}/draft), a
// moment after they stop typing, so a closed tab, a crash or another
// browser loses nothing. The bot page restores it with a notice and a
// Discard; saving a version drops it on the server.

import { api } from './api.js';
import { h, mount, when } from './dom.js';

/** How long typing must pause before the draft is sent. */
const AUTOSAVE_DELAY_MS = 800;

/**
 * @typedef {{config: string, tests: string}} DraftText
 */

/**
 * draftKeeper returns {el, status, restore, changed, saved}.
 * @param {string} path the bot's draft route
 * @param {() => DraftText} current what the editor holds now
 * @param {() => boolean} edited whether that differs from the saved version
 * @param {(text: DraftText) => void} apply puts a text into the editor
 */
export function draftKeeper(path, current, edited, apply) {
  const el = h('div', { class: 'draft-notice', 'aria-live': 'polite' });
  const status = h('span', { class: 'muted draft-status', 'aria-live': 'polite' });
  let timer = 0;
  let sent = ''; // the JSON of the last text the server holds, so an unchanged text is not sent again
  /** @type {DraftText|null} */
  let original = null; // what the editor held before a draft was restored

  const send = async () => {
    const text = current();
    const body = JSON.stringify(text);
    if (body === sent) return;
    try {
      if (edited()) {
        await api('PUT', path, text);
        status.textContent = 'Draft saved';
      } else {
        // Back to the saved version: nothing is left to keep.
        await api('DELETE', path);
        status.textContent = '';
      }
      sent = body;
    } catch (err) {
      status.textContent = 'Draft not saved: ' + /** @type {Error} */ (err).message;
    }
  };

  const discard = async () => {
    clearTimeout(timer);
    await api('DELETE', path).catch(() => {});
    if (original) apply(original);
    sent = JSON.stringify(current());
    status.textContent = '';
    mount(el, []);
  };

  return {
    el,
    status,
    /**
     * restore loads the person's draft, if they have one that differs
     * from what the editor holds, and says so.
     */
    async restore() {
      const draft = await api('GET', path).catch(() => null);
      const before = current();
      sent = JSON.stringify(before);
      if (!draft || (draft.config === before.config && (draft.tests || '') === before.tests)) return;
      original = before;
      apply({ config: draft.config, tests: draft.tests || '' });
      sent = JSON.stringify(current());
      mount(el, h('div', { class: 'alert warn', role: 'status' },
        `Restored your unsaved draft from ${when(draft.updated_at)} — `,
        h('button', { type: 'button', class: 'link discard-draft', onclick: () => discard() }, 'Discard')));
    },
    /** changed schedules sending the editor's text after typing pauses. */
    changed() {
      clearTimeout(timer);
      status.textContent = edited() ? 'Saving draft…' : '';
      timer = setTimeout(send, AUTOSAVE_DELAY_MS);
    },
    /** saved forgets the draft: it became a version (the server dropped it). */
    saved() {
      clearTimeout(timer);
      sent = JSON.stringify(current());
      original = null;
      status.textContent = '';
      mount(el, []);
    },
  };
}
