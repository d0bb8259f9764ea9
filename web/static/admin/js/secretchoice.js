// A tenant secret chosen where it is used, or created right there: a list
// of the tenant's secrets with "+ New secret…", which opens a name and a
// value to save as a new secret. Tool headers (form/secretpick.js) and
// channel credentials (channels.js) use it, so nobody leaves the page for
// Secrets. Values are sent once and never shown.

import { api, tenantPath } from './api.js';
import { h, mount, errorBox, busy } from './dom.js';

const NEW = '__new__';

/**
 * secretChoice returns the list of secrets (a select named name) with the
 * inline creation under it. chosen() is the secret's name once there is
 * one: a new secret whose name and value are typed but not saved yet is
 * saved first.
 * @param {string} tenant
 * @param {{name?: string, label: string, hint?: string, suggest?: string}} opts
 */
export function secretChoice(tenant, { name, label, hint, suggest }) {
  const choice = h('select', { name: name || '', 'aria-label': label, class: 'secret-choice', onchange: () => { creating.hidden = choice.value !== NEW; } });
  const newName = h('input', { name: 'new_secret_name', placeholder: suggest || 'crm_token', pattern: '[A-Za-z_][A-Za-z0-9_]*', 'aria-label': 'New secret name' });
  if (suggest) newName.value = suggest;
  const value = h('input', { name: 'new_secret_value', type: 'password', autocomplete: 'off', 'aria-label': 'New secret value' });
  const out = h('div', { 'aria-live': 'polite' });

  const load = async (/** @type {string} */ select) => {
    const { secrets } = await api('GET', tenantPath(tenant, 'secrets'));
    mount(choice, [
      ...secrets.map((/** @type {{name: string}} */ s) => h('option', { value: s.name }, s.name)),
      h('option', { value: NEW }, '+ New secret…')]);
    choice.value = select || (secrets[0]?.name ?? NEW);
    creating.hidden = choice.value !== NEW;
  };
  const save = async () => {
    const n = newName.value.trim();
    await api('PUT', tenantPath(tenant, 'secrets', n), { value: value.value });
    value.value = '';
    await load(n);
    out.replaceChildren();
    return n;
  };
  const creating = h('div', { class: 'row-form new-secret', hidden: true },
    h('label', { class: 'field' }, h('span', null, 'Name'), newName),
    h('label', { class: 'field' }, h('span', null, 'Value'), value),
    h('button', {
      type: 'button', class: 'small',
      onclick: (e) => busy(/** @type {HTMLButtonElement} */ (e.target), save).catch((err) => mount(out, errorBox(err))),
    }, 'Save secret'));

  const chosen = async () => {
    if (choice.value !== NEW) return choice.value;
    if (!newName.value.trim() || !value.value) throw new Error(`${label}: choose a secret, or give the new one a name and a value.`);
    return save();
  };
  load('').catch((err) => mount(out, errorBox(err)));
  const el = h('div', { class: 'secret-choice-field' },
    h('label', { class: 'field' }, h('span', null, label), choice, hint ? h('small', { class: 'hint' }, hint) : null),
    creating, out);
  return { el, choice, chosen };
}
