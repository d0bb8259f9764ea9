// Secrets chosen, not typed: beside an HTTP tool's headers, a list of the
// tenant's secrets (and a way to create one there, for admins) that puts
// {{secrets.NAME}} into the header being edited, or adds an
// Authorization: Bearer header with it.

import { api, tenantPath } from '../api.js';
import { h, mount, errorBox, busy } from '../dom.js';

const NEW = '__new__';

/**
 * secretPicker returns the picker for the headers group headers (a
 * fields.js pairs() element).
 * @param {string} tenant
 * @param {HTMLElement} headers
 */
export function secretPicker(tenant, headers) {
  const choice = h('select', { 'aria-label': 'Secret', class: 'secret-choice', onchange: () => { creating.hidden = choice.value !== NEW; } });
  const name = h('input', { name: 'new_secret_name', placeholder: 'crm_token', pattern: '[A-Za-z_][A-Za-z0-9_]*', 'aria-label': 'New secret name' });
  const value = h('input', { name: 'new_secret_value', type: 'password', autocomplete: 'off', 'aria-label': 'New secret value' });
  const out = h('div', { 'aria-live': 'polite' });
  /** @type {HTMLInputElement|null} */
  let lastValue = null; // the header value input last edited, where the secret goes
  headers.addEventListener('focusin', (e) => {
    const input = /** @type {HTMLElement} */ (e.target);
    if (input.matches('.pair input[aria-label$="value"]')) lastValue = /** @type {HTMLInputElement} */ (input);
  });

  const load = async (/** @type {string} */ select) => {
    const { secrets } = await api('GET', tenantPath(tenant, 'secrets'));
    mount(choice, [
      ...secrets.map((/** @type {{name: string}} */ s) => h('option', { value: s.name }, s.name)),
      h('option', { value: NEW }, '+ New secret…')]);
    choice.value = select || (secrets[0]?.name ?? NEW);
    creating.hidden = choice.value !== NEW;
  };

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

  const creating = h('div', { class: 'row-form new-secret', hidden: true },
    h('label', { class: 'field' }, h('span', null, 'Name'), name),
    h('label', { class: 'field' }, h('span', null, 'Value'), value),
    h('button', {
      type: 'button', class: 'small',
      onclick: (e) => busy(/** @type {HTMLButtonElement} */ (e.target), async () => {
        await api('PUT', tenantPath(tenant, 'secrets', name.value.trim()), { value: value.value });
        value.value = '';
        await load(name.value.trim());
        out.replaceChildren();
      }).catch((err) => mount(out, errorBox(err))),
    }, 'Save secret'));

  load('').catch((err) => mount(out, errorBox(err)));
  return h('div', { class: 'secret-pick' },
    h('div', { class: 'row-form' },
      h('label', { class: 'field' }, h('span', null, 'Tenant secret'), choice),
      h('button', {
        type: 'button', class: 'small ghost insert-secret',
        onclick: () => { if (choice.value && choice.value !== NEW) insert(); },
      }, 'Put into the header')),
    creating, out,
    h('small', { class: 'muted' }, 'The value never shows here; the header sends it. Admins create secrets.'));
}
