// The tenant's bots: a list with each one's live version, and a form to
// create a bot from a starter config.

import { api, tenantPath } from './api.js';
import { h, card, field, table, errorBox, when, busy } from './dom.js';

const starter = (name) => JSON.stringify({
  basic_settings: { name, greeting: 'Hi! How can I help?' },
  llm: { model: 'gpt-4o-mini' },
}, null, 2);

/** botsView lists the tenant's bots. */
export async function botsView({ tenant }) {
  const [t, list] = await Promise.all([api('GET', tenantPath(tenant)), api('GET', tenantPath(tenant, 'bots'))]);
  const rows = list.bots.map((b) => h('tr', null,
    h('td', null, h('a', { href: `#/t/${encodeURIComponent(tenant)}/bots/${encodeURIComponent(b.slug)}` }, b.name)),
    h('td', null, h('code', null, b.slug)),
    h('td', null, b.published_version ? h('span', { class: 'badge live' }, 'v' + b.published_version) : h('span', { class: 'badge' }, 'not published')),
    h('td', null, when(b.updated_at))));
  return h('div', null,
    h('h1', null, t.name),
    h('p', { class: 'lead' }, 'Tenant ', h('code', null, t.slug), ' · created ', when(t.created_at)),
    card('Bots', table(['Name', 'Slug', 'Live version', 'Updated'], rows, 'No bots yet. Create the first one below.')),
    card('New bot', createForm(tenant)));
}

function createForm(tenant) {
  const slug = h('input', { name: 'slug', required: true, pattern: '[a-z0-9][a-z0-9\\-]*', placeholder: 'support' });
  const name = h('input', { name: 'name', required: true, placeholder: 'Acme Support' });
  const out = h('div', { 'aria-live': 'polite' });
  return h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        await api('POST', tenantPath(tenant, 'bots'), { slug: slug.value, config: JSON.parse(starter(name.value)) });
        location.hash = `#/t/${encodeURIComponent(tenant)}/bots/${encodeURIComponent(slug.value)}`;
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Slug', slug, 'Lowercase letters, digits and dashes; used in URLs and the widget.'), field('Name', name),
  h('button', { type: 'submit' }, 'Create bot'), out);
}
