// A bot's page: the config editor (form and JSON, autosaved as the
// person's draft) with the preview chat beside it, which restarts on the
// draft in one click; below, its versions (publish, roll back, load into
// the editor), running tests, a canary and comparing two versions (once
// there are two), and how to reach the bot from an OpenAI SDK or an MCP
// client.

import { api, tenantPath } from './api.js';
import { h, mount, card, table, errorBox, notice, when, short, busy } from './dom.js';
import { configPanel } from './configpanel.js';
import { previewChat } from './preview.js';
import { versionDiff } from './versiondiff.js';
import { testsPanel } from './tests.js';
import { canaryPanel } from './canary.js';
import { guardLeaving } from './leave.js';
import { draftKeeper } from './draft.js';

/** botView renders #/t/<tenant>/bots/<bot>. */
export async function botView({ tenant, params: [slug] }) {
  const botPath = (...p) => tenantPath(tenant, 'bots', slug, ...p);
  let [bot, { versions }] = await Promise.all([api('GET', botPath()), api('GET', botPath('versions'))]);
  const latest = versions[versions.length - 1];
  const base = latest ? await api('GET', botPath('versions', String(latest.number))) : null;

  const heading = h('h1', null, bot.name);
  const liveBadge = h('span');
  const versionsBox = h('div');
  const saveOut = h('div', { 'aria-live': 'polite' });
  const prompt = h('pre', { class: 'prompt' });
  const basedOn = h('span', { class: 'muted' });
  const preview = previewChat(tenant, slug, () => saveVersion());
  const diff = versionDiff(tenant, slug);
  const tests = testsPanel(tenant, slug, bot);
  const canary = canaryPanel(tenant, slug, () => refresh());
  tests.setTests(base?.tests);

  let keeper = null;
  const editor = await configPanel(tenant, base ? JSON.stringify(base.config, null, 2) : '{}', (result) => {
    prompt.textContent = result.prompt || 'The compiled prompt appears once the config is valid.';
  }, () => keeper?.changed());

  // saved is the config and test file as last loaded or saved: anything
  // else is an edit that leaving the page would lose (the draft keeps it
  // too, but the question still stands).
  const current = () => ({ config: editor.text(), tests: tests.text() });
  let saved = current();
  const edited = () => editor.text() !== saved.config || tests.text() !== saved.tests;
  guardLeaving(edited);
  keeper = draftKeeper(botPath('draft'), current, edited, (text) => {
    editor.setText(text.config);
    tests.setText(text.tests);
  });
  tests.el.addEventListener('input', () => keeper.changed());
  await keeper.restore();

  let showWhenTwo = () => {};
  const refresh = async () => {
    [bot, { versions }] = await Promise.all([api('GET', botPath()), api('GET', botPath('versions'))]);
    drawVersions();
    showWhenTwo();
    preview.setVersions(versions, bot.published_version);
    diff.setVersions(versions);
    tests.setVersions(versions);
    canary.setBot(bot, versions);
  };

  const load = async (n) => {
    if (edited() && !confirm(`Load version ${n} over your unsaved edits?`)) return;
    const v = await api('GET', botPath('versions', String(n)));
    editor.setText(JSON.stringify(v.config, null, 2));
    tests.setTests(v.tests);
    saved = current();
    keeper.changed();
    basedOn.textContent = `Editing from version ${n}`;
  };

  const publish = (n) => async (e) => {
    await busy(e.target, async () => {
      await api('POST', botPath('publish'), { version: n });
      saveOut.replaceChildren(notice(`Version ${n} is live.`));
      await refresh();
    }).catch((err) => saveOut.replaceChildren(errorBox(err)));
  };

  function drawVersions() {
    mount(liveBadge, bot.published_version
      ? h('span', { class: 'badge live' }, `live: v${bot.published_version}`)
      : h('span', { class: 'badge' }, 'not published'));
    const rows = [...versions].reverse().map((v) => {
      const live = v.number === bot.published_version;
      return h('tr', { class: live ? 'is-live' : null },
        h('th', { scope: 'row', title: 'Fingerprint ' + v.fingerprint }, 'v' + v.number, live ? h('span', { class: 'badge live' }, 'live') : null),
        h('td', { title: when(v.created_at) }, short(v.created_at)),
        h('td', { class: 'actions' },
          h('button', { type: 'button', class: 'small ghost', onclick: () => load(v.number).catch((err) => saveOut.replaceChildren(errorBox(err))) }, 'Edit'),
          h('button', { type: 'button', class: 'small ghost', onclick: () => preview.use(v.number) }, 'Preview'),
          v.number > 1 ? h('button', { type: 'button', class: 'small ghost', title: `Compare v${v.number - 1} with v${v.number}`, onclick: () => diff.show(v.number - 1, v.number) }, 'Changes') : null,
          live ? null : h('button', { type: 'button', class: 'small', onclick: publish(v.number) },
            v.number < bot.published_version ? 'Roll back' : 'Publish')));
    });
    mount(versionsBox, table(['Version', 'Saved', ''], rows, 'No versions.'));
  }

  // saveVersion saves the editor's config and tests as a new version
  // (or finds the same one) and returns it; the server drops the draft.
  const saveVersion = async () => {
    const sending = current();
    let config;
    try {
      config = JSON.parse(editor.text());
    } catch (err) {
      throw new Error('The config is not valid JSON: ' + err.message);
    }
    const v = await api('POST', botPath('versions'), { config, tests: tests.testsJSON() });
    saved = sending;
    keeper.saved();
    basedOn.textContent = `Editing from version ${v.number}`;
    await refresh();
    return v;
  };

  const save = h('button', {
    type: 'button',
    onclick: (e) => busy(e.target, async () => {
      const v = await saveVersion();
      const warnings = (v.warnings || []).map((w) => h('li', null, h('code', null, w.pointer || '/'), ' ', w.message));
      saveOut.replaceChildren(notice(`Saved as version ${v.number}. Try it in the preview, then publish it.`),
        ...(warnings.length ? [h('div', { class: 'alert warn', role: 'status' }, 'Saved with warnings:', h('ul', null, warnings))] : []));
      preview.use(v.number);
    }).catch((err) => saveOut.replaceChildren(errorBox(err))),
  }, 'Save as new version');

  if (latest) basedOn.textContent = `Editing from version ${latest.number}`;
  drawVersions();
  preview.setVersions(versions, bot.published_version);
  diff.setVersions(versions);
  tests.setVersions(versions);
  canary.setBot(bot, versions);

  // Canary and comparison need two versions; before that they are noise.
  const canaryCard = card('Canary', canary.el);
  const compareCard = card('Compare versions', diff.el);
  showWhenTwo = () => {
    canaryCard.hidden = versions.length < 2;
    compareCard.hidden = versions.length < 2;
  };
  showWhenTwo();

  return h('div', { class: 'bot-page' },
    h('div', { class: 'title-row' }, heading, liveBadge),
    h('p', { class: 'lead' }, 'Slug ', h('code', null, slug), ' · updated ', when(bot.updated_at)),
    h('div', { class: 'workbench' },
      card('Config',
        h('div', { class: 'toolbar' }, basedOn, keeper.status, save),
        keeper.el,
        saveOut,
        editor.el,
        h('details', { class: 'prompt-box' }, h('summary', null, 'Compiled system prompt'), prompt)),
      h('div', { class: 'preview-side' }, card('Preview', preview.el))),
    h('div', { class: 'grid' },
      h('div', null,
        card('Versions', versionsBox),
        card('Tests', tests.el)),
      h('div', { class: 'side' },
        canaryCard,
        compareCard,
        card('Use from code', fromCode(tenant, slug)),
        card('Delete', deleteBot(tenant, slug)))));
}

/** deleteBot deletes the bot after a confirmation; a refusal (another bot
 * calls it as an agent) is shown with the API's message. */
function deleteBot(tenant, slug) {
  const out = h('div', { 'aria-live': 'polite' });
  const button = h('button', {
    type: 'button',
    class: 'danger',
    onclick: (e) => {
      if (!confirm(`Delete the bot ${slug} with all its versions and dialogs? This cannot be undone.`)) return;
      busy(e.target, async () => {
        await api('DELETE', tenantPath(tenant, 'bots', slug));
        location.hash = '#/t/' + encodeURIComponent(tenant);
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, 'Delete bot');
  return h('div', null,
    h('p', { class: 'muted' }, 'Deletes every version and dialog of this bot. A bot that another bot\'s live version calls as an agent cannot be deleted.'),
    button, out);
}

/** fromCode says where the bot's OpenAI and MCP faces answer (docs/api.md). */
function fromCode(tenant, slug) {
  const origin = window.location.origin;
  return h('div', { class: 'from-code' },
    h('p', { class: 'muted' }, 'The published version answers OpenAI SDKs and MCP clients, with a server key (sk_) that may chat.'),
    h('dl', { class: 'facts' },
      h('dt', null, 'OpenAI base URL'), h('dd', null, h('code', null, origin + '/v1')),
      h('dt', null, 'model'), h('dd', null, h('code', null, slug)),
      h('dt', null, 'MCP (streamable HTTP)'), h('dd', null, h('code', { class: 'mcp-url' }, `${origin}/v1/tenants/${tenant}/bots/${slug}/mcp`))));
}
