// Outbound webhooks: endpoints that receive the tenant's events, signed
// per Standard Webhooks. A new or rotated secret is shown once. Each
// endpoint has a delivery log with every attempt, a replay button and a
// test event.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, when, busy, notice, actionButton as button, secretOnce } from './dom.js';

// The event types an endpoint may subscribe to (docs/events.md).
const eventTypes = ['dialog.created', 'message.created', 'dialog.handoff_requested', 'dialog.handoff_taken',
  'dialog.handoff_released', 'dialog.closed', 'tool.failed', 'feedback.created', 'bot.version_published', 'member.changed', 'usage.quota_reached',
  'knowledge.source_ready', 'knowledge.source_failed', 'guardrail.fired'];

/** webhooksView renders #/t/<tenant>/webhooks. */
export async function webhooksView({ tenant }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const log = h('div');
  const { bots } = await api('GET', tenantPath(tenant, 'bots'));
  const slugOf = Object.fromEntries(bots.map((b) => [b.id, b.slug]));
  const fail = (err) => out.replaceChildren(errorBox(err));

  const draw = async () => {
    const { webhooks } = await api('GET', tenantPath(tenant, 'webhooks'));
    mount(list, table(['URL', 'Events', 'Bot', 'Status', ''], webhooks.map((w) => h('tr', { 'data-id': w.id },
      h('td', null, h('code', null, w.url), w.name ? h('div', { class: 'hint' }, w.name) : null,
        w.description ? h('div', { class: 'hint description' }, w.description) : null),
      h('td', null, w.events.join(', ')),
      h('td', null, w.bot ? h('code', null, slugOf[w.bot] || w.bot) : 'all'),
      h('td', null, w.enabled ? h('span', { class: 'badge ok' }, 'enabled')
        : [h('span', { class: 'badge' }, 'disabled'), w.disabled_reason ? h('div', { class: 'hint disabled-reason' }, w.disabled_reason) : null],
      w.previous_secret_expires_at ? h('div', { class: 'hint' }, `previous secret signs too until ${when(w.previous_secret_expires_at)}`) : null),
      h('td', { class: 'actions' },
        button('Deliveries', () => showLog(tenant, w, log, fail)),
        button('Send test', async () => {
          await api('POST', tenantPath(tenant, 'webhooks', w.id, 'test'));
          out.replaceChildren(notice(`Test event queued for ${w.url}.`));
          await showLog(tenant, w, log, fail);
        }, fail),
        button(w.enabled ? 'Disable' : 'Enable', async () => {
          await api('PATCH', tenantPath(tenant, 'webhooks', w.id), { enabled: !w.enabled });
          await draw();
        }, fail),
        button('Rotate secret', async () => {
          if (!confirm('Rotate the signing secret? The current one keeps signing beside the new one for 24 hours.')) return;
          const r = await api('POST', tenantPath(tenant, 'webhooks', w.id, 'rotate-secret'));
          out.replaceChildren(shownOnce(r, 'Secret rotated'));
          await draw();
        }, fail),
        button('Delete', async () => {
          if (!confirm(`Delete the endpoint ${w.url} and its delivery log?`)) return;
          await api('DELETE', tenantPath(tenant, 'webhooks', w.id));
          log.replaceChildren();
          await draw();
        }, fail, 'danger')))), 'No endpoints yet.'));
  };
  await draw();
  return h('div', null, h('h1', null, 'Webhooks'),
    h('p', null, 'Parley POSTs the events you choose to your endpoints, signed per ',
      h('a', { href: 'https://www.standardwebhooks.com/', rel: 'noopener' }, 'Standard Webhooks'),
      ', retrying for about three days. An endpoint that answers 410, or takes nothing over a whole schedule, is disabled and says why.'),
    out, card('New endpoint', createForm(tenant, bots, out, draw)), card('Endpoints', list), log);
}

function createForm(tenant, bots, out, draw) {
  const url = h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://example.com/parley-webhooks' });
  const bot = h('select', { name: 'bot' }, h('option', { value: '' }, 'All bots'), bots.map((b) => h('option', { value: b.slug }, b.name)));
  const description = h('input', { name: 'description', maxlength: 500, placeholder: 'Our CRM: new dialogs become leads' });
  const all = h('input', { type: 'checkbox', name: 'all_events' });
  const boxes = eventTypes.map((t) => h('input', { type: 'checkbox', name: 'event', value: t }));
  return h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const events = all.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value);
      const req = { url: url.value, events };
      if (bot.value) req.bot = bot.value;
      if (description.value) req.description = description.value;
      busy(e.submitter, async () => {
        const w = await api('POST', tenantPath(tenant, 'webhooks'), req);
        out.replaceChildren(shownOnce(w, 'Endpoint created'));
        e.target.reset();
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, h('div', { class: 'row-form' }, field('URL', url), field('Bot', bot, 'Only this bot’s events, or all.'),
    field('Description', description, 'Optional: what the receiver is.')),
  h('fieldset', { class: 'inline events' }, h('legend', null, 'Events'),
    h('label', null, all, ' all (*)'), boxes.map((b) => h('label', null, b, ' ', b.value))),
  h('div', null, h('button', { type: 'submit' }, 'Create endpoint')));
}

// shownOnce shows an endpoint's new signing secret.
function shownOnce(w, what) {
  return secretOnce(w.secret, what);
}

// showLog draws the endpoint's delivery log: each event's delivery with
// its attempts, and a replay button.
async function showLog(tenant, w, log, fail) {
  const { deliveries } = await api('GET', tenantPath(tenant, 'webhooks', w.id, 'deliveries'));
  const rows = deliveries.map((d) => h('tr', { class: `delivery ${d.status}`, 'data-id': d.id },
    h('td', null, h('code', null, d.event_type), h('div', { class: 'hint' }, d.event_id)),
    h('td', null, h('span', { class: `badge ${d.status === 'succeeded' ? 'ok' : ''}` }, d.status),
      d.next_attempt_at ? h('div', { class: 'hint' }, `next attempt ${when(d.next_attempt_at)}`) : null,
      d.last_error ? h('div', { class: 'hint' }, d.last_error) : null),
    h('td', null, d.attempts.length ? h('ol', { class: 'attempts' }, d.attempts.map((a) => h('li', null,
      `${a.status || 'no answer'} · ${a.duration_ms} ms · ${when(a.at)}`,
      a.error ? h('div', { class: 'hint' }, a.error) : null,
      a.response ? h('pre', { class: 'excerpt' }, a.response) : null))) : '—'),
    h('td', { class: 'actions' }, button('Replay', async () => {
      await api('POST', tenantPath(tenant, 'webhooks', w.id, 'deliveries', d.id, 'replay'));
      await showLog(tenant, w, log, fail);
    }, fail))));
  log.replaceChildren(card(`Deliveries to ${w.url}`,
    h('div', null, button('Refresh', () => showLog(tenant, w, log, fail), fail, 'ghost')),
    table(['Event', 'Status', 'Attempts', ''], rows, 'Nothing sent yet.')));
}
