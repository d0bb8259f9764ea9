// The dialogs log: every conversation of the tenant, filterable by bot and
// status, and one dialog's whole history with its tool calls.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, when, json } from './dom.js';

const statuses = ['active', 'paused', 'handoff', 'closed'];

/** dialogsView renders #/t/<tenant>/dialogs. */
export async function dialogsView({ tenant }) {
  const { bots } = await api('GET', tenantPath(tenant, 'bots'));
  const botName = Object.fromEntries(bots.map((b) => [b.id, b.name]));
  const bot = h('select', { name: 'bot' }, h('option', { value: '' }, 'All bots'), bots.map((b) => h('option', { value: b.slug }, b.name)));
  const status = h('select', { name: 'status' }, h('option', { value: '' }, 'Any status'), statuses.map((s) => h('option', { value: s }, s)));
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'ghost', hidden: true }, 'Load more');
  const empty = h('p', { class: 'empty', hidden: true }, 'No dialogs match.');
  let cursor = '';

  const load = async (append) => {
    const q = new URLSearchParams();
    if (bot.value) q.set('bot', bot.value);
    if (status.value) q.set('status', status.value);
    if (append && cursor) q.set('cursor', cursor);
    const page = await api('GET', tenantPath(tenant, 'dialogs') + (q.size ? '?' + q : ''));
    const rows = page.dialogs.map((d) => h('tr', null,
      h('td', null, h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs/${encodeURIComponent(d.id)}`, title: d.id }, h('code', null, d.id.slice(0, 12)))),
      h('td', null, botName[d.bot_id] || d.bot_id),
      h('td', null, 'v' + d.version, d.preview ? h('span', { class: 'badge' }, 'preview') : null),
      h('td', null, d.user_id || '—'),
      h('td', null, d.channel),
      h('td', null, h('span', { class: 'badge ' + d.status }, d.status)),
      h('td', null, when(d.updated_at))));
    if (append) body.append(...rows); else mount(body, rows);
    cursor = page.next_cursor || '';
    more.hidden = !cursor;
    empty.hidden = body.children.length > 0;
  };
  bot.addEventListener('change', () => load(false));
  status.addEventListener('change', () => load(false));
  more.addEventListener('click', () => load(true));
  await load(false);

  return h('div', null, h('h1', null, 'Dialogs'),
    card(null, h('div', { class: 'row-form' }, field('Bot', bot), field('Status', status)),
      h('div', { class: 'table-wrap' }, h('table', null,
        h('thead', null, h('tr', null, ['Dialog', 'Bot', 'Version', 'User', 'Channel', 'Status', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
        body)),
      empty, more));
}

/** dialogView renders #/t/<tenant>/dialogs/<id>: messages, tool calls, versions. */
export async function dialogView({ tenant, params: [id] }) {
  const d = await api('GET', tenantPath(tenant, 'dialogs', id));
  const callsOf = {};
  for (const c of d.tool_calls || []) (callsOf[c.message_id] = callsOf[c.message_id] || []).push(c);
  const context = Object.entries(d.context || {});

  return h('div', null,
    h('p', null, h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs` }, '← All dialogs')),
    h('div', { class: 'title-row' }, h('h1', null, 'Dialog ', h('code', null, d.id)), h('span', { class: 'badge ' + d.status }, d.status)),
    h('dl', { class: 'facts' },
      h('dt', null, 'Version'), h('dd', null, 'v' + d.version, d.preview ? ' (preview)' : ''),
      h('dt', null, 'User'), h('dd', null, d.user_id || '—'),
      h('dt', null, 'Channel'), h('dd', null, d.channel),
      h('dt', null, 'Started'), h('dd', null, when(d.created_at)),
      context.length ? [h('dt', null, 'Context'), h('dd', null, context.map(([k, v]) => h('code', null, `${k}=${v}`)))] : null),
    card('Conversation', h('ol', { class: 'transcript' },
      (d.messages || []).map((m) => message(m, callsOf[m.id] || [])))));
}

function message(m, calls) {
  const marks = [
    m.version ? h('span', { class: 'badge' }, 'v' + m.version) : null,
    m.status && m.status !== 'complete' ? h('span', { class: 'badge ' + m.status }, m.status) : null,
    m.model ? h('span', { class: 'muted' }, m.model) : null,
  ];
  return h('li', { class: 'turn ' + (m.role || m.kind) },
    h('div', { class: 'turn-head' }, h('strong', null, m.role || m.kind), marks, h('span', { class: 'muted' }, when(m.created_at))),
    m.text ? h('p', { class: 'turn-text' }, m.text) : null,
    calls.map((c) => h('details', { class: 'tool ' + (c.is_error ? 'failed' : 'ok') },
      h('summary', null, h('span', { class: 'tool-name' }, c.name), ` · ${c.status} · ${c.duration_ms} ms`),
      h('h3', null, 'Arguments'), h('pre', null, json(c.arguments)),
      h('h3', null, c.is_error ? 'Error' : 'Result'), h('pre', null, json(c.result)))));
}
