// Inbound channels: where a bot's users write from — the tenant's own
// backend (a signed webhook), Telegram or Slack. A new channel shows its
// inbound URL and, once, its secret; a Telegram channel can point its bot
// at Parley with setWebhook from here. Platform credentials are tenant
// secrets, chosen here or created right here (secretchoice.js) — and a
// Slack app's new signing secret when it is rotated, which Parley writes
// to its secret.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, notice, when, actionButton as button, secretOnce } from './dom.js';
import { secretChoice } from './secretchoice.js';

// The tenant secrets each kind names, by role (docs/channels.md), with
// the name a new one is offered.
const secretRoles = {
  webhook: [],
  telegram: [['bot_token', 'Bot token', 'The tenant secret holding the token @BotFather gave; paste the token into a new one.', 'TELEGRAM_BOT_TOKEN']],
  slack: [['bot_token', 'Bot token', 'The tenant secret holding the bot token (xoxb-...).', 'SLACK_BOT_TOKEN'],
    ['signing_secret', 'Signing secret', 'The tenant secret holding the Slack app’s signing secret (Basic Information).', 'SLACK_SIGNING_SECRET']],
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
      h('td', null, h('span', { class: `badge ${c.enabled ? 'ok' : ''}` }, c.enabled ? 'enabled' : 'disabled'),
        c.previous_secret_expires_at ? h('div', { class: 'hint previous-secret' }, `previous secret accepted until ${when(c.previous_secret_expires_at)}`) : null),
      h('td', { class: 'actions' },
        c.kind === 'telegram' ? button('Set webhook', async () => {
          const r = await api('POST', tenantPath(tenant, 'channels', c.id, 'telegram', 'set-webhook'));
          out.replaceChildren(notice(`Telegram now sends the bot’s updates to ${r.url}.`));
        }, fail) : null,
        button('Rotate secret', async () => {
          if (c.kind === 'slack') {
            out.replaceChildren(slackRotateForm(tenant, c, out, draw));
            return;
          }
          if (!confirm(rotateWarning[c.kind])) return;
          const r = await api('POST', tenantPath(tenant, 'channels', c.id, 'rotate-secret'));
          out.replaceChildren(c.kind === 'webhook' ? secretOnce(r.secret, 'Secret rotated')
            : notice(`Telegram now sends the bot’s updates with a new secret token; the old one is accepted until ${when(r.previous_secret_expires_at)}.`));
          await draw();
        }, fail),
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
    h('p', null, 'Let users reach a bot from your own backend, Telegram or Slack. Each conversation is one dialog; a platform’s retried delivery is never answered twice. A platform’s token is kept as a tenant secret: choose one from ',
      h('a', { href: `#/t/${encodeURIComponent(tenant)}/secrets` }, 'Secrets'), ' or create it here.'),
    out, card('New channel', createForm(tenant, bots, out, draw)), card('Channels', list));
}

// rotateWarning is what rotating a channel's secret does, by kind.
const rotateWarning = {
  webhook: 'Rotate the signing secret? Requests signed with the current one are accepted for 24 hours more; switch your backend to the new one.',
  telegram: 'Rotate the secret token? Parley registers the new one with Telegram (setWebhook); the current one is accepted for 24 hours more.',
};

// slackRotateForm takes the signing secret Slack made when it was
// regenerated on the app's Basic Information page.
function slackRotateForm(tenant, c, out, draw) {
  const input = h('input', { name: 'signing_secret', type: 'password', required: true, autocomplete: 'off' });
  return h('form', {
    class: 'stack card slack-rotate',
    onsubmit: (e) => {
      e.preventDefault();
      e.submitter.disabled = true;
      api('POST', tenantPath(tenant, 'channels', c.id, 'rotate-secret'), { secret: input.value }).then(async (r) => {
        out.replaceChildren(notice(`Signing secret saved in ${c.secrets.signing_secret}; the previous one is accepted until ${when(r.previous_secret_expires_at)}.`));
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err))).finally(() => { e.submitter.disabled = false; });
    },
  }, field('New signing secret', input, 'Regenerate it on your Slack app’s Basic Information page and paste it here; Parley stores it in the tenant secret the channel names.'),
  h('div', null, h('button', { type: 'submit' }, 'Save signing secret')));
}

function createForm(tenant, bots, out, draw) {
  const kind = h('select', { name: 'kind' }, Object.entries(kindNames).map(([k, label]) => h('option', { value: k }, label)));
  const bot = h('select', { name: 'bot', required: true }, bots.map((b) => h('option', { value: b.slug }, b.name)));
  const secrets = h('div', { class: 'stack channel-secrets' });
  const botUser = h('input', { name: 'bot_user_id', placeholder: 'U0123ABCD' });
  const slackOnly = field('Bot user id (optional)', botUser, 'Slack: the bot’s own user id, whose messages are ignored.');
  /** @type {[string, ReturnType<typeof secretChoice>][]} */
  let choices = [];
  const drawSecrets = () => {
    choices = secretRoles[kind.value].map(([role, label, hint, suggest]) => [role, secretChoice(tenant, { name: `secret_${role}`, label, hint, suggest })]);
    mount(secrets, choices.map(([role, c]) => { c.el.dataset.role = role; return c.el; }));
    slackOnly.hidden = kind.value !== 'slack';
  };
  kind.addEventListener('change', drawSecrets);
  drawSecrets();
  return h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const req = { kind: kind.value, bot: bot.value };
      if (kind.value === 'slack' && botUser.value) req.bot_user_id = botUser.value;
      e.submitter.disabled = true;
      // Secrets typed in but not saved yet are saved first.
      Promise.all(choices.map(async ([role, c]) => [role, await c.chosen()])).then((named) => {
        if (named.length) req.secrets = Object.fromEntries(named);
        return api('POST', tenantPath(tenant, 'channels'), req);
      }).then(async (c) => {
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
