// Knowledge bases (docs/knowledge.md): the tenant's list with a form to
// create one, and a base's page: its sources with their live status, the
// forms that add sources (knowledgeadd.js), each source's chunks and a
// retrieval test (knowledgesearch.js). Viewers read and search; editors
// and admins change.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, notice, when, busy, actionButton as button } from './dom.js';
import { roleIn, atLeast } from './roles.js';
import { showProblems, clearProblems, at } from './problems.js';
import { addSources } from './knowledgeadd.js';
import { searchPanel } from './knowledgesearch.js';

/** How often a page with sources still being indexed asks again, in ms. */
const POLL = 1000;

/** knowledgeView renders #/t/<tenant>/knowledge. */
export async function knowledgeView({ tenant, me }) {
  const canEdit = atLeast(roleIn(me, tenant), 'editor');
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const fail = (err) => out.replaceChildren(errorBox(err));
  const draw = async () => {
    const { knowledge_bases: bases } = await api('GET', tenantPath(tenant, 'knowledge-bases'));
    mount(list, table(['Name', 'Slug', 'Search', 'Updated', ''], bases.map((b) => h('tr', { 'data-kb': b.slug },
      h('td', null, h('a', { href: basePath(tenant, b.slug) }, b.name)),
      h('td', null, h('code', null, b.slug)),
      h('td', null, searchMode(b), b.building ? h('span', { class: 'badge queued' }, 'reindexing') : null),
      h('td', null, when(b.updated_at)),
      h('td', { class: 'actions' }, canEdit ? [
        button('Reindex', async () => {
          await api('POST', tenantPath(tenant, 'knowledge-bases', b.slug, 'reindex'));
          out.replaceChildren(notice(`Reindexing ${b.name}: searches use the current index until the new one is complete.`));
          await draw();
        }, fail),
        button('Delete', async () => {
          if (!confirm(deleteWarning(b))) return;
          await api('DELETE', tenantPath(tenant, 'knowledge-bases', b.slug));
          out.replaceChildren(notice(`Deleted ${b.name}.`));
          await draw();
        }, fail, 'danger')] : null))),
    canEdit ? 'No knowledge bases yet. Create one below, then add documents, web pages or questions and answers to it.'
      : 'No knowledge bases yet. An editor or admin of the tenant can create one.'));
  };
  await draw();
  return h('div', null, h('h1', null, 'Knowledge'),
    h('p', { class: 'lead' }, 'Documents, web pages and answers your bots can search. A bot uses the bases its config names.'),
    out, card('Knowledge bases', list),
    canEdit ? card('New knowledge base', await createForm(tenant)) : null);
}

function basePath(tenant, slug) {
  return `#/t/${encodeURIComponent(tenant)}/knowledge/${encodeURIComponent(slug)}`;
}

// searchMode says in words how a base is searched.
function searchMode(b) {
  return b.embedding ? ['by words and meaning ', h('span', { class: 'hint' }, `(${b.embedding.provider} · ${b.embedding.model})`)] : 'by words';
}

function deleteWarning(b) {
  return `Delete the knowledge base “${b.name}” with all its sources and chunks? Bots that search it find nothing in it any more. This cannot be undone.`;
}

// createForm makes a base: a name and, optionally, an embedding model of
// one of the tenant's providers.
async function createForm(tenant) {
  const providers = await api('GET', tenantPath(tenant, 'providers')).then((r) => r.providers).catch(() => []);
  const name = h('input', { name: 'name', required: true, maxlength: 200, placeholder: 'Help Center' });
  const slug = h('input', { name: 'slug', pattern: '[a-z0-9][a-z0-9\\-]*', maxlength: 63, placeholder: 'help-center' });
  const models = h('datalist', { id: 'kb-embedding-models' });
  const model = h('input', { name: 'embedding_model', list: 'kb-embedding-models', placeholder: 'text-embedding-3-small' });
  const provider = h('select', { name: 'embedding_provider' },
    h('option', { value: '' }, 'None: search by words only'),
    providers.map((p) => h('option', { value: p.name }, p.name)));
  const modelField = at('/embedding/model', field('Embedding model', model, 'A model of that provider that makes embeddings.'));
  const pick = () => {
    const p = providers.find((x) => x.name === provider.value);
    mount(models, (p ? p.models || [] : []).map((m) => h('option', { value: m })));
    modelField.hidden = !provider.value;
    model.required = Boolean(provider.value);
  };
  provider.addEventListener('change', pick);
  pick();
  const form = h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const req = { name: name.value };
      if (slug.value) req.slug = slug.value;
      if (provider.value) req.embedding = { provider: provider.value, model: model.value };
      busy(e.submitter, async () => {
        clearProblems(form);
        const b = await api('POST', tenantPath(tenant, 'knowledge-bases'), req);
        location.hash = basePath(tenant, b.slug);
      }).catch((err) => showProblems(form, err));
    },
  }, h('div', { class: 'row-form' },
    at('/name', field('Name', name, 'What people call it, like “Help Center”.')),
    at('/slug', field('Slug', slug, 'Optional: made from the name. Lowercase letters, digits and dashes; bots name the base by it.')),
    // Every problem of the embedding but its model's shows here.
    at('/embedding', field('Search by meaning', provider, providers.length
      ? 'Optional. With an embedding model, a search also finds text that means the same in other words.'
      : 'Add a provider on the Providers page to search by meaning too.')),
    modelField, models),
  h('div', null, h('button', { type: 'submit' }, 'Create knowledge base')));
  return form;
}

/** knowledgeBaseView renders #/t/<tenant>/knowledge/<kb>: one base. */
export async function knowledgeBaseView({ tenant, params: [slug], me }) {
  const canEdit = atLeast(roleIn(me, tenant), 'editor');
  const path = (...parts) => tenantPath(tenant, 'knowledge-bases', slug, ...parts);
  let base = await api('GET', path());
  const out = h('div', { 'aria-live': 'polite' });
  const fail = (err) => out.replaceChildren(errorBox(err));
  const title = h('h1', null, base.name);
  const facts = h('p', { class: 'lead' });
  const summary = h('p', { class: 'muted sources-summary', 'aria-live': 'polite' });
  const list = h('div');
  const chunks = h('div');
  /** @type {any[]} */
  let sources = [];

  const drawFacts = () => {
    title.textContent = base.name;
    mount(facts, 'Slug ', h('code', null, base.slug), ' · searched ', searchMode(base),
      base.building ? [' · ', h('span', { class: 'badge queued reindexing' }, 'reindexing'),
        ' searches use the current index until the new one is complete'] : null);
  };

  // drawSources draws the list when it changed since it was last drawn,
  // and gives the focus back to the button that had it: a keyboard user
  // is not thrown out of the list every second while sources are read.
  let drawn = '';
  const drawSources = () => {
    const now = JSON.stringify(sources);
    if (now === drawn) return;
    drawn = now;
    const count = (st) => sources.filter((s) => s.status === st).length;
    summary.textContent = sources.length ? `${sources.length} ${sources.length === 1 ? 'source' : 'sources'}: ` +
      ['ready', 'indexing', 'queued', 'failed'].filter((st) => count(st)).map((st) => `${count(st)} ${st}`).join(', ') : '';
    const focused = list.contains(document.activeElement) ? document.activeElement : null;
    const row = focused && focused.closest('tr') ? /** @type {HTMLElement} */ (focused.closest('tr')).dataset.source : '';
    const label = focused ? focused.textContent : '';
    drawList();
    if (!focused) return;
    const buttons = Array.from(list.querySelectorAll(`tr[data-source="${CSS.escape(row || '')}"] button`));
    const again = /** @type {HTMLElement|undefined} */ (buttons.find((b) => b.textContent === label) || buttons[0]);
    if (again) again.focus();
  };
  const drawList = () => {
    mount(list, table(['Source', 'Tags', 'Status', 'Indexed', ''], sources.map((s) => h('tr', { 'data-source': s.id, class: `source ${s.status}` },
      h('td', { class: 'source-title' }, h('strong', null, s.title || s.filename || s.url || kindName[s.kind] || s.kind),
        h('div', { class: 'hint' }, s.title || s.filename || s.url ? kindName[s.kind] || s.kind : null, s.url && s.title ? [' · ', h('code', null, s.url)] : null,
          s.filename && s.filename !== s.title ? [' · ', s.filename] : null, s.refresh ? ` · fetched again every ${every(s.refresh)}` : null)),
      h('td', null, s.tags.length ? s.tags.map((t) => h('code', { class: 'tag' }, t)) : '—'),
      h('td', { class: 'status' }, statusOf(s)),
      h('td', null, when(s.indexed_at)),
      h('td', { class: 'actions' },
        button('Chunks', () => showChunks(s), fail, 'ghost'),
        canEdit ? button(s.status === 'failed' ? 'Retry' : 'Refresh', async () => {
          await api('POST', path('sources', s.id, 'refresh'));
          await load();
        }, fail) : null,
        canEdit ? button('Delete', async () => {
          if (!confirm(`Delete the source “${s.title || s.url}” and its chunks from ${base.name}?`)) return;
          await api('DELETE', path('sources', s.id));
          if (chunks.dataset.source === s.id) chunks.replaceChildren();
          await load();
        }, fail, 'danger') : null))),
    canEdit ? 'No sources yet. Add files, a web page, a text or questions and answers below.' : 'No sources yet.'));
  };

  // load reads the base and its sources, and keeps reading them every
  // second while any is still on its way, so each status is live.
  // A page no longer on screen (the reader went elsewhere) stops asking;
  // the first load runs before the page is shown, the next one after. A
  // failed ask is said and tried again, slower: the network may be back.
  let timer = 0;
  let lost = false; // the last ask failed, and said so
  const tick = () => {
    if (!root.isConnected) return;
    load().then(() => {
      if (lost) out.replaceChildren();
      lost = false;
    }, (err) => {
      fail(err);
      lost = true;
      timer = window.setTimeout(tick, 5 * POLL);
    });
  };
  const load = async () => {
    clearTimeout(timer);
    [base, { sources }] = await Promise.all([api('GET', path()), api('GET', path('sources'))]);
    drawFacts();
    drawSources();
    const moving = base.building || sources.some((s) => s.status === 'queued' || s.status === 'indexing');
    if (moving) timer = window.setTimeout(tick, POLL);
  };

  const showChunks = async (s) => {
    const { chunks: rows } = await api('GET', path('sources', s.id, 'chunks'));
    chunks.dataset.source = s.id;
    mount(chunks, card(`Chunks of “${s.title || s.url}”`,
      h('div', { class: 'toolbar' }, h('span', { class: 'muted' }, `${rows.length} ${rows.length === 1 ? 'chunk' : 'chunks'}, in the order of the document`),
        button('Close', () => { chunks.replaceChildren(); }, fail, 'ghost')),
      rows.length ? h('ol', { class: 'chunks' }, rows.map((c) => h('li', { class: 'chunk', 'data-chunk': c.chunk },
        h('div', { class: 'chunk-head' }, h('strong', null, `#${c.chunk + 1}`), c.title ? ` ${c.title}` : null,
          c.locator ? [' · ', h('span', { class: 'locator' }, c.locator)] : null, h('span', { class: 'muted' }, ` · ${c.tokens} tokens`)),
        h('p', { class: 'chunk-text' }, c.text))))
        : h('p', { class: 'empty' }, s.status === 'failed' ? 'No chunks: the source failed to index.' : 'No chunks yet: the source is not indexed.')));
    // The chunks take the focus, so a keyboard or screen reader user is
    // where they appeared.
    const shown = /** @type {HTMLElement} */ (chunks.firstElementChild);
    shown.tabIndex = -1;
    shown.focus();
  };

  const root = h('div', null, title, facts, out,
    canEdit ? card('Settings', settingsForm(tenant, () => base, load, out)) : null,
    card('Sources', summary, list),
    canEdit ? card('Add sources', addSources(path('sources'), () => new Set(sources.map((s) => s.id)), load)) : null,
    chunks,
    card('Test a search', searchPanel(path('search'), () => Boolean(base.embedding), (id) => sources.find((s) => s.id === id), (s) => showChunks(s).catch(fail))));
  await load();
  return root;
}

const kindName = { file: 'File', url: 'Web page', sitemap: 'Sitemap', text: 'Text', qa: 'Questions and answers' };

// statusOf shows a source's status in words: how far indexing got, and
// why it failed with what to do about it.
function statusOf(s) {
  const badge = h('span', { class: `badge ${s.status === 'ready' ? 'live' : s.status === 'failed' ? 'handoff' : 'queued'}` }, s.status);
  const counts = [s.pages ? `${s.pages} ${s.pages === 1 ? 'page' : 'pages'}` : '', `${s.chunks} ${s.chunks === 1 ? 'chunk' : 'chunks'}`].filter(Boolean).join(', ');
  switch (s.status) {
    case 'ready':
      return [badge, h('div', { class: 'hint' }, counts)];
    case 'failed':
      return [badge, h('div', { class: 'source-error', role: 'note' }, s.error || 'It could not be indexed.'),
        h('div', { class: 'hint' }, s.kind === 'url' ? 'Fix the page or its address, then press Retry.' : 'Fix the cause, then press Retry, or delete it and add it again.')];
    case 'indexing':
      return [badge, h('div', { class: 'hint' }, s.chunks ? `reading… (${counts} so far)` : 'reading and cutting into chunks…')];
    default:
      // A queued source with an error is waiting to try again.
      return [badge, s.error ? h('div', { class: 'hint source-error' }, s.error) : h('div', { class: 'hint' }, 'waiting to be read')];
  }
}

// every says a refresh interval ("24h0m0s": at least an hour) in words.
function every(d) {
  const hours = Number((d.match(/^(\d+)h/) || [])[1] || 0);
  if (hours && hours % 168 === 0) return hours === 168 ? 'week' : `${hours / 168} weeks`;
  if (hours && hours % 24 === 0) return hours === 24 ? 'day' : `${hours / 24} days`;
  return hours === 1 ? 'hour' : `${hours} hours`;
}

// settingsForm renames the base, starts a reindex and deletes it;
// changed reads the base again.
function settingsForm(tenant, current, changed, out) {
  const name = h('input', { name: 'name', required: true, maxlength: 200, value: current().name });
  const fail = (err) => out.replaceChildren(errorBox(err));
  const path = (...parts) => tenantPath(tenant, 'knowledge-bases', current().slug, ...parts);
  const form = h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        clearProblems(form);
        await api('PATCH', path(), { name: name.value });
        await changed();
        out.replaceChildren(notice(`Renamed to ${name.value}.`));
      }).catch((err) => showProblems(form, err));
    },
  }, at('/name', field('Name', name, 'Bots name the base by its slug, which stays.')), h('button', { type: 'submit' }, 'Rename'));
  return [form,
    h('div', { class: 'toolbar' },
      h('p', { class: 'muted' }, 'Reindex reads every source again into a new index; searches keep using the current one until the new one is complete.'),
      h('div', null,
        button('Reindex', async () => {
          await api('POST', path('reindex'));
          await changed();
          out.replaceChildren(notice('Reindexing: every source is read again.'));
        }, fail),
        ' ',
        button('Delete knowledge base', async () => {
          if (!confirm(deleteWarning(current()))) return;
          await api('DELETE', path());
          location.hash = `#/t/${encodeURIComponent(tenant)}/knowledge`;
        }, fail, 'danger')))];
}
