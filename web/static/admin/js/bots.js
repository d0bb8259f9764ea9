// The tenant's bots: a list with each one's live version, and a form to
// create a bot from a starter config.

import { api, tenantPath } from './api.js';
import { h, card, field, table, errorBox, when, busy } from './dom.js';

/**
 * starter is the first config of a bot from the guided start: its name,
 * what it is for, and optionally one HTTP tool.
 * @param {{name: string, purpose: string, tool: {name: string, description: string, url: string}}} a
 */
const starter = ({ name, purpose, tool }) => ({
  basic_settings: { name, ...(purpose ? { description: purpose } : {}), greeting: 'Hi! How can I help?' },
  ...(tool.name ? {
    tools: [{ name: tool.name, description: tool.description || `Calls ${tool.url}`,
      parameters: { type: 'object', properties: {} }, endpoint: { url: tool.url, method: 'GET' } }],
  } : {}),
  llm: { model: 'gpt-4o-mini' },
});

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
    card('New bot', createForm(tenant)),
    list.bots.length ? null : quickStart());
}

/** createForm is the guided start: a name, what the bot is for, and
 * optionally its first tool; everything else is edited on its page. */
function createForm(tenant) {
  const name = h('input', { name: 'name', required: true, placeholder: 'Acme Support',
    oninput: () => { if (!slugTouched) slug.value = slugOf(name.value); } });
  let slugTouched = false;
  const slug = h('input', { name: 'slug', required: true, pattern: '[a-z0-9][a-z0-9\\-]*', placeholder: 'support',
    oninput: () => { slugTouched = true; } });
  const purpose = h('textarea', { name: 'purpose', rows: 2, placeholder: 'Answers questions about orders and returns for our web shop' });
  const toolName = h('input', { name: 'tool_name', pattern: '[A-Za-z_][A-Za-z0-9_\\-]*', placeholder: 'get_order_status' });
  const toolDescription = h('input', { name: 'tool_description', placeholder: 'Look up an order by its number' });
  const toolURL = h('input', { name: 'tool_url', type: 'url', placeholder: 'https://shop.example.com/orders' });
  const out = h('div', { 'aria-live': 'polite' });
  return h('form', {
    class: 'guided-start',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        if (toolName.value && !toolURL.value) throw new Error('The first tool needs a URL, or leave its name empty.');
        const config = starter({ name: name.value, purpose: purpose.value.trim(),
          tool: { name: toolName.value.trim(), description: toolDescription.value.trim(), url: toolURL.value.trim() } });
        await api('POST', tenantPath(tenant, 'bots'), { slug: slug.value, config });
        location.hash = `#/t/${encodeURIComponent(tenant)}/bots/${encodeURIComponent(slug.value)}`;
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  },
  h('div', { class: 'row-form' }, field('Name', name), field('Slug', slug, 'Lowercase letters, digits and dashes; used in URLs and the widget.')),
  field('What is it for?', purpose, 'One or two sentences; the bot is told, and MCP clients read it.'),
  h('details', { class: 'first-tool' }, h('summary', null, 'Its first tool (optional)'),
    h('p', { class: 'muted' }, 'An HTTP endpoint the bot may call. Arguments, headers and more tools are added on the bot\'s page.'),
    h('div', { class: 'row-form' }, field('Tool name', toolName), field('What it does', toolDescription), field('URL', toolURL))),
  h('button', { type: 'submit' }, 'Create bot'), out);
}

/** slugOf suggests a slug from a bot's name. */
function slugOf(name) {
  return name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 63);
}

/** quickStart says how a first answer comes, for a tenant with no bots. */
function quickStart() {
  return card('Quick start',
    h('ol', { class: 'quick-start' },
      h('li', null, 'Start the server with ', h('code', null, 'make run'), '. Without a model key it answers with the bundled fake model, which echoes: no account and no restart needed. ',
        'For a real model: ', h('code', null, 'PARLEY_LLM_API_KEY=sk-... make run'), '.'),
      h('li', null, 'Create a bot above: a name and what it is for are enough.'),
      h('li', null, 'On its page, talk to it in the preview beside the editor; ', h('strong', null, 'Restart on draft'), ' tries what you typed.'),
      h('li', null, 'Publish a version to let the widget and the API use it.')));
}
