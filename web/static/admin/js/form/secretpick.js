// Secrets chosen, not typed: beside an HTTP tool's headers, a list of the
// tenant's secrets (and a way to create one there, for admins) that puts
// {{secrets.NAME}} into the header being edited, or adds an
// Authorization: Bearer header with it.

import { h } from '../dom.js';
import { secretChoice } from '../secretchoice.js';

/**
 * secretPicker returns the picker for the headers group headers (a
 * fields.js pairs() element).
 * @param {string} tenant
 * @param {HTMLElement} headers
 */
export function secretPicker(tenant, headers) {
  const { el, choice } = secretChoice(tenant, { label: 'Tenant secret' });
  /** @type {HTMLInputElement|null} */
  let lastValue = null; // the header value input last edited, where the secret goes
  headers.addEventListener('focusin', (e) => {
    const input = /** @type {HTMLElement} */ (e.target);
    if (input.matches('.pair input[aria-label$="value"]')) lastValue = /** @type {HTMLInputElement} */ (input);
  });

  const insert = () => {
    const token = `{{secrets.${choice.value}}}`;
    let target = lastValue && headers.contains(lastValue) ? lastValue : null;
    if (!target) {
      // No header chosen: a new Authorization header carries it.
      /** @type {HTMLButtonElement} */ (headers.querySelector(':scope > div > button')).click();
      const rows = headers.querySelectorAll('.pair');
      const [k, v] = /** @type {NodeListOf<HTMLInputElement>} */ (rows[rows.length - 1].querySelectorAll('input'));
      k.value = 'Authorization';
      v.value = 'Bearer ';
      target = v;
    }
    const at = target.selectionStart ?? target.value.length;
    target.value = target.value.slice(0, at) + token + target.value.slice(target.selectionEnd ?? at);
    target.dispatchEvent(new Event('input', { bubbles: true }));
    lastValue = target;
  };

  return h('div', { class: 'secret-pick' }, el,
    h('button', {
      type: 'button', class: 'small ghost insert-secret',
      onclick: () => { if (choice.value && choice.value !== '__new__') insert(); },
    }, 'Put into the header'),
    h('small', { class: 'muted' }, 'The value never shows here; the header sends it. Admins create secrets.'));
}
