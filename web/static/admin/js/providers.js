// Providers: the tenant's own model accounts (OpenAI-compatible or
// Anthropic) that bots name in llm.provider and llm.fallbacks. The API key
// is a tenant secret, named here; the page never sees a key.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, notice, when, busy } from './dom.js';

/** providersView renders #/t/<tenant>/providers. */
export async function providersView({ tenant }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const draw = async () => {
    const { providers } = await api('GET', tenantPath(tenant, 'providers'));
    mount(list, table(['Name', 'Kind', 'Base URL', 'Key secret', 'Models', 'Updated', ''], providers.map((p) => h('tr', null,
      h('td', null, h('code', null, p.name)),
      h('td', null, p.kind),
      h('td', null, h('code', null, p.base_url)),
      h('td', null, p.api_key_secret ? h('code', null, p.api_key_secret) : '—'),
      h('td', { class: 'models' }, (p.models || []).join(', ') || '—'),
      h('td', null, when(p.updated_at)),
      h('td', { class: 'actions' }, h('button', {
        type: 'button', class: 'small danger',
        onclick: (e) => {
          if (!confirm(`Delete the provider ${p.name}? Bots naming it fall back or fail.`)) return;
          busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'providers', p.name)); await draw(); })
            .catch((err) => out.replaceChildren(errorBox(err)));
        },
      }, 'Delete')))), 'No providers yet: bots use the server\'s.'));
  };

  const name = h('input', { name: 'name', required: true, pattern: '[A-Za-z0-9_\\-]+', placeholder: 'claude' });
  const kind = h('select', { name: 'kind' }, h('option', { value: 'openai' }, 'OpenAI-compatible'), h('option', { value: 'anthropic' }, 'Anthropic'));
  const baseURL = h('input', { name: 'base_url', type: 'url', placeholder: 'empty: the kind\'s public API' });
  const secret = h('input', { name: 'api_key_secret', pattern: '[A-Za-z_][A-Za-z0-9_]*', placeholder: 'claude_key' });
  const models = h('input', { name: 'models', placeholder: 'claude-sonnet-4-5, claude-haiku-4-5' });
  const form = h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        await api('PUT', tenantPath(tenant, 'providers', name.value),
          { kind: kind.value, base_url: baseURL.value, api_key_secret: secret.value,
            models: models.value.split(',').map((m) => m.trim()).filter(Boolean) });
        out.replaceChildren(notice(`Saved ${name.value}. Bots use it with "llm": {"provider": "${name.value}", "model": "…"}.`));
        e.target.reset();
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Name', name, 'What llm.provider names.'), field('Kind', kind), field('Base URL', baseURL),
  field('Key secret', secret, 'The name of a secret holding the API key (set it on the Secrets page first).'),
  field('Models', models, 'Optional, comma-separated: saving a bot that asks this provider for another model warns.'),
  h('button', { type: 'submit' }, 'Save provider'));

  await draw();
  return h('div', null, h('h1', null, 'Model providers'), out, card('Add or replace a provider', form), card('Providers', list));
}
