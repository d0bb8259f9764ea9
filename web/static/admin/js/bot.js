// A bot's page: its versions (publish, roll back, load into the editor),
// comparing two versions, the config editor (form and JSON) that saves new versions (with
// their conversation tests), running tests, the preview chat, and how to
// reach the bot from an OpenAI SDK or an MCP client.

import { api, tenantPath } from './api.js';
import { h, mount, card, table, errorBox, notice, when, short, busy } from './dom.js';
import { configPanel } from './configpanel.js';
import { previewChat } from './preview.js';
import { versionDiff } from './versiondiff.js';
import { testsPanel } from './tests.js';
import { canaryPanel } from './canary.js';

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
  const preview = previewChat(tenant, slug);
  const diff = versionDiff(tenant, slug);
  const tests = testsPanel(tenant, slug, bot);
  const canary = canaryPanel(tenant, slug, () => refresh());
  tests.setTests(base?.tests);

  const editor = await configPanel(tenant, base ? JSON.stringify(base.config, null, 2) : '{}', (result) => {
    prompt.textContent = result.prompt || 'The compiled prompt appears once the config is valid.';
  });

  const refresh = async () => {
    [bot, { versions }] = await Promise.all([api('GET', botPath()), api('GET', botPath('versions'))]);
    drawVersions();
    preview.setVersions(versions, bot.published_version);
    diff.setVersions(versions);
    tests.setVersions(versions);
    canary.setBot(bot, versions);
  };

  const load = async (n) => {
    const v = await api('GET', botPath('versions', String(n)));
    editor.setText(JSON.stringify(v.config, null, 2));
    tests.setTests(v.tests);
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

  const save = h('button', {
    type: 'button',
    onclick: (e) => busy(e.target, async () => {
      let config;
      try {
        config = JSON.parse(editor.text());
      } catch (err) {
        throw new Error('The config is not valid JSON: ' + err.message);
      }
      const v = await api('POST', botPath('versions'), { config, tests: tests.testsJSON() });
      const warnings = (v.warnings || []).map((w) => h('li', null, h('code', null, w.pointer || '/'), ' ', w.message));
      saveOut.replaceChildren(notice(`Saved as version ${v.number}. Preview it below, then publish it.`),
        ...(warnings.length ? [h('div', { class: 'alert warn', role: 'status' }, 'Saved with warnings:', h('ul', null, warnings))] : []));
      basedOn.textContent = `Editing from version ${v.number}`;
      await refresh();
      preview.use(v.number);
    }).catch((err) => saveOut.replaceChildren(errorBox(err))),
  }, 'Save as new version');

  if (latest) basedOn.textContent = `Editing from version ${latest.number}`;
  drawVersions();
  preview.setVersions(versions, bot.published_version);
  diff.setVersions(versions);
  tests.setVersions(versions);
  canary.setBot(bot, versions);

  return h('div', { class: 'bot-page' },
    h('div', { class: 'title-row' }, heading, liveBadge),
    h('p', { class: 'lead' }, 'Slug ', h('code', null, slug), ' · updated ', when(bot.updated_at)),
    h('div', { class: 'grid' },
      card('Config',
        h('div', { class: 'toolbar' }, basedOn, save),
        saveOut,
        editor.el,
        h('details', { class: 'prompt-box' }, h('summary', null, 'Compiled system prompt'), prompt)),
      h('div', { class: 'side' },
        card('Versions', versionsBox),
        card('Tests', tests.el),
        card('Canary', canary.el),
        card('Compare versions', diff.el),
        card('Preview', preview.el),
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
