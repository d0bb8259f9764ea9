// Secrets: values tools reference as {{secrets.NAME}}. They are write-only:
// the API lists names and never returns a value.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, notice, when, busy } from './dom.js';
import { identityCard } from './identity.js';

/** secretsView renders #/t/<tenant>/secrets. */
export async function secretsView({ tenant }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const draw = async () => {
    const { secrets } = await api('GET', tenantPath(tenant, 'secrets'));
    mount(list, table(['Name', 'Updated', ''], secrets.map((s) => h('tr', null,
      h('td', null, h('code', null, s.name)),
      h('td', null, when(s.updated_at)),
      h('td', { class: 'actions' }, h('button', {
        type: 'button', class: 'small danger',
        onclick: (e) => {
          if (!confirm(`Delete the secret ${s.name}? Tools using it will fail.`)) return;
          busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'secrets', s.name)); await draw(); })
            .catch((err) => out.replaceChildren(errorBox(err)));
        },
      }, 'Delete')))), 'No secrets yet.'));
  };

  const name = h('input', { name: 'name', required: true, pattern: '[A-Za-z0-9_]+', placeholder: 'crm_token' });
  const value = h('input', { type: 'password', name: 'value', required: true, autocomplete: 'new-password' });
  const form = h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        await api('PUT', tenantPath(tenant, 'secrets', name.value), { value: value.value });
        out.replaceChildren(notice(`Saved ${name.value}.`));
        e.target.reset();
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Name', name, 'Use it in a config as {{secrets.NAME}}.'), field('Value', value, 'Stored encrypted; never shown again.'),
  h('button', { type: 'submit' }, 'Set secret'));

  await draw();
  return h('div', null, h('h1', null, 'Secrets'), out, card('Set a secret', form), card('Secrets', list),
    card('Signed end users', await identityCard(tenant)));
}
