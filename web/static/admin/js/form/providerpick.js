// The bot's model provider chosen from the tenant's providers, or created
// right there (with its API key kept as a tenant secret), instead of a
// typed name that may not exist.

import { api, tenantPath } from '../api.js';
import { h, mount, errorBox, busy } from '../dom.js';
import { getIn, pointerOf } from '../configdoc.js';

const NEW = '__new__';

/**
 * providerPicker edits llm.provider.
 * @param {import('./fields.js').FormContext} f
 */
export function providerPicker(f) {
  const path = ['llm', 'provider'];
  const current = getIn(f.doc.get(), path);
  const choice = h('select', {
    name: 'provider',
    onchange: () => {
      creating.hidden = choice.value !== NEW;
      if (choice.value !== NEW) f.doc.edit(path, choice.value || undefined);
    },
  });
  const name = h('input', { name: 'new_provider_name', placeholder: 'claude', pattern: '[a-z0-9][a-z0-9\\-]*', 'aria-label': 'New provider name' });
  const kind = h('select', { name: 'new_provider_kind', 'aria-label': 'New provider kind' },
    h('option', { value: 'openai' }, 'OpenAI-compatible'), h('option', { value: 'anthropic' }, 'Anthropic'));
  const key = h('input', { name: 'new_provider_key', type: 'password', autocomplete: 'off', 'aria-label': 'New provider API key' });
  const out = h('div', { 'aria-live': 'polite' });

  const load = async (/** @type {string} */ select) => {
    const { providers } = await api('GET', tenantPath(f.tenant, 'providers'));
    const names = providers.map((/** @type {{name: string}} */ p) => p.name);
    mount(choice, [
      h('option', { value: '' }, 'the server default'),
      ...names.map((/** @type {string} */ n) => h('option', { value: n }, n)),
      // A name the config holds that the tenant has not (yet) stays shown.
      select && !names.includes(select) ? h('option', { value: select }, `${select} (not a provider of this tenant)`) : null,
      h('option', { value: NEW }, '+ New provider…')]);
    choice.value = select || '';
  };

  const creating = h('div', { class: 'row-form new-provider', hidden: true },
    h('label', { class: 'field' }, h('span', null, 'Name'), name),
    h('label', { class: 'field' }, h('span', null, 'Kind'), kind),
    h('label', { class: 'field' }, h('span', null, 'API key'), key),
    h('button', {
      type: 'button', class: 'small',
      onclick: (e) => busy(/** @type {HTMLButtonElement} */ (e.target), async () => {
        const n = name.value.trim();
        // The key is kept as a tenant secret, which the provider names.
        const secret = n.replace(/[^A-Za-z0-9_]/g, '_') + '_api_key';
        if (key.value) await api('PUT', tenantPath(f.tenant, 'secrets', secret), { value: key.value });
        await api('PUT', tenantPath(f.tenant, 'providers', n), { kind: kind.value, base_url: '', api_key_secret: key.value ? secret : '', models: [] });
        key.value = '';
        await load(n);
        creating.hidden = true;
        out.replaceChildren();
        f.doc.edit(path, n);
      }).catch((err) => mount(out, errorBox(err))),
    }, 'Create provider'));

  load(typeof current === 'string' ? current : '').catch((err) => mount(out, errorBox(err)));
  return h('div', { class: 'field provider-pick', 'data-pointer': pointerOf(path) },
    h('label', { class: 'field' }, h('span', null, 'Provider'), choice),
    creating, out,
    h('small', null, 'Which of the tenant\'s model providers answers; its API key stays a secret. Admins create providers.'));
}
