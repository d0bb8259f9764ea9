// Inbound channels: where a bot's users write from — the tenant's own
// backend (a signed webhook), Telegram or Slack. A new channel shows its
// inbound URL and, once, its secret; a Telegram channel can point its bot
// at Parley with setWebhook from here. Platform credentials are tenant
// secrets, named here, never typed here.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, notice, actionButton as button, secretOnce } from './dom.js';

// The tenant secrets each kind names, by role (docs/channels.md).
const secretRoles = {
  webhook: [],
  telegram: [['bot_token', 'Bot token secret', 'the tenant secret holding the token @BotFather gave']],
  slack: [['bot_token', 'Bot token secret', 'the tenant secret holding the bot token (xoxb-...)'],
    ['signing_secret', 'Signing secret secret', 'the tenant secret holding the Slack app’s signing secret']],
};

const kindNames = { webhook: 'Webhook (your backend)', telegram: 'Telegram', slack: 'Slack' };

/** channelsView renders #/t/<tenant>/channels. */
export async function channelsView({ tenant }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const { bots } = await api('GET', tenantPath(tenant, 'bots'));
  const slugOf = Object.fromEntries(bots.map((b) => [b.id, b.slug]));
  const fail = (err) => out.replaceChildren(errorBox(err));

  const draw = async () => {
    const { channels } = await api('GET', tenantPath(tenant, 'channels'));
    mount(list, table(['Kind', 'Bot', 'Inbound URL', 'Secrets', 'Status', ''], channels.map((c) => h('tr', { 'data-id': c.id },
      h('td', null, kindNames[c.kind] || c.kind, c.name ? h('div', { class: 'hint' }, c.name) : null),
      h('td', null, h('code', null, slugOf[c.bot] || c.bot)),
      h('td', null, h('code', { class: 'inbound-url' }, c.inbound_url)),
      h('td', null, Object.entries(c.secrets).map(([role, name]) => h('div', null, `${role}: `, h('code', null, name)))),
      h('td', null, h('span', { class: `badge ${c.enabled ? 'ok' : ''}` }, c.enabled ? 'enabled' : 'disabled')),
      h('td', { class: 'actions' },
        c.kind === 'telegram' ? button('Set webhook', async () => {
          const r = await api('POST', tenantPath(tenant, 'channels', c.id, 'telegram', 'set-webhook'));
          out.replaceChildren(notice(`Telegram now sends the bot’s updates to ${r.url}.`));
        }, fail) : null,
        button(c.enabled ? 'Disable' : 'Enable', async () => {
          await api('PATCH', tenantPath(tenant, 'channels', c.id), { enabled: !c.enabled });
          await draw();
        }, fail),
        button('Delete', async () => {
          if (!confirm(`Delete this ${c.kind} channel? Its dialogs stay.`)) return;
          await api('DELETE', tenantPath(tenant, 'channels', c.id));
          await draw();
        }, fail, 'danger')))), 'No channels yet.'));
  };
  await draw();
  return h('div', null, h('h1', null, 'Channels'),
    h('p', null, 'Let users reach a bot from your own backend, Telegram or Slack. Each conversation is one dialog; a platform’s retried delivery is never answered twice. Put platform tokens in ',
      h('a', { href: `#/t/${encodeURIComponent(tenant)}/secrets` }, 'Secrets'), ' first and name them here.'),
    out, card('New channel', createForm(tenant, bots, out, draw)), card('Channels', list));
}

function createForm(tenant, bots, out, draw) {
  const kind = h('select', { name: 'kind' }, Object.entries(kindNames).map(([k, label]) => h('option', { value: k }, label)));
  const bot = h('select', { name: 'bot', required: true }, bots.map((b) => h('option', { value: b.slug }, b.name)));
  const secrets = h('div', { class: 'row-form channel-secrets' });
  const botUser = h('input', { name: 'bot_user_id', placeholder: 'U0123ABCD' });
  const slackOnly = field('Bot user id (optional)', botUser, 'Slack: the bot’s own user id, whose messages are ignored.');
  const drawSecrets = () => {
    mount(secrets, secretRoles[kind.value].map(([role, label, hint]) =>
      field(label, h('input', { name: `secret_${role}`, required: true, pattern: '[A-Za-z_][A-Za-z0-9_]*', placeholder: role.toUpperCase() }), hint)));
    slackOnly.hidden = kind.value !== 'slack';
  };
  kind.addEventListener('change', drawSecrets);
  drawSecrets();
  return h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const req = { kind: kind.value, bot: bot.value };
      const roles = secretRoles[kind.value];
      if (roles.length) {
        req.secrets = Object.fromEntries(roles.map(([role]) => [role, e.target.elements[`secret_${role}`].value]));
      }
      if (kind.value === 'slack' && botUser.value) req.bot_user_id = botUser.value;
      e.submitter.disabled = true;
      api('POST', tenantPath(tenant, 'channels'), req).then(async (c) => {
        out.replaceChildren(created(c));
        e.target.reset();
        drawSecrets();
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err))).finally(() => { e.submitter.disabled = false; });
    },
  }, h('div', { class: 'row-form' }, field('Kind', kind), field('Bot', bot, 'The bot that answers.')),
  secrets, slackOnly,
  h('div', null, h('button', { type: 'submit' }, 'Create channel')));
}

// created tells what to do with a new channel: its inbound URL, and its
// secret once.
function created(c) {
  const next = {
    webhook: 'Sign your backend’s requests with this secret the Standard Webhooks way and POST them to the inbound URL.',
    telegram: 'Press “Set webhook” below, and Telegram sends the bot’s messages here with this secret token.',
    slack: 'Set the inbound URL as the Request URL of your Slack app’s Event Subscriptions.',
  }[c.kind];
  return h('div', null,
    c.secret ? secretOnce(c.secret, 'Channel created', c.kind === 'telegram' ? 'secret token' : 'signing secret')
      : notice('Channel created.'),
    h('p', { class: 'hint' }, 'Inbound URL: ', h('code', { class: 'new-inbound-url' }, c.inbound_url), ' — ', next));
}
