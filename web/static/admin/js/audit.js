// The audit log: who changed what in the tenant, when and from where,
// newest first, filtered by action, actor and time.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, when, busy } from './dom.js';

const ACTIONS = ['version.published', 'version.rolled_back', 'canary.set', 'canary.dropped', 'bot.created', 'bot.deleted',
  'key.created', 'key.revoked', 'key.updated', 'secret.set', 'secret.deleted', 'member.invited', 'member.added', 'member.role_changed',
  'member.removed', 'member.invite_accepted', 'member.sessions_ended', 'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated',
  'channel.secret_rotated',
  'provider.set', 'provider.deleted', 'identity.set', 'identity.deleted', 'sso.set', 'sso.deleted', 'sso.break_glass', 'tenant.updated', 'limits.set',
  'dialog.deleted', 'end_user.erased', 'dialogs.exported'];

/** auditView renders #/t/<tenant>/audit. */
export async function auditView({ tenant }) {
  const rows = h('tbody');
  const out = h('div', { 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'ghost', hidden: true }, 'Older entries');
  const action = h('select', { name: 'action' }, h('option', { value: '' }, 'any action'), ACTIONS.map((a) => h('option', { value: a }, a)));
  const actor = h('input', { name: 'actor', placeholder: 'email, key name or id' });
  const since = h('input', { type: 'date', name: 'since' });
  let cursor = '';

  const load = async (fresh) => {
    const q = new URLSearchParams();
    if (action.value) q.set('action', action.value);
    if (actor.value.trim()) q.set('actor', actor.value.trim());
    if (since.value) q.set('since', new Date(since.value + 'T00:00:00').toISOString());
    if (!fresh && cursor) q.set('cursor', cursor);
    const page = await api('GET', tenantPath(tenant, 'audit-log') + '?' + q);
    if (fresh) rows.replaceChildren();
    rows.append(...page.entries.map(entryRow));
    cursor = page.next_cursor || '';
    more.hidden = !cursor;
    out.replaceChildren(rows.children.length ? '' : h('p', { class: 'empty' }, 'No entries.'));
  };
  more.addEventListener('click', (e) => busy(e.target, () => load(false)).catch((err) => out.replaceChildren(errorBox(err))));
  const filters = h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, () => load(true)).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Action', action), field('Actor', actor), field('Since', since), h('div', null, h('button', { type: 'submit' }, 'Filter')));
  await load(true);
  return h('div', null, h('h1', null, 'Audit log'), card(null, filters),
    card(null, h('div', { class: 'table-wrap' }, h('table', { class: 'audit' },
      h('thead', null, h('tr', null, ['When', 'Who', 'Action', 'Target', 'Detail', 'From'].map((t) => h('th', { scope: 'col' }, t)))),
      rows)), out, more));
}

function entryRow(e) {
  const who = e.actor.kind === 'operator' ? 'operator' : `${e.actor.name || e.actor.id}${e.actor.kind === 'key' ? ' (key)' : ''}`;
  const detail = e.detail && Object.keys(e.detail).length ? Object.entries(e.detail).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', ') : '';
  return h('tr', { 'data-action': e.action },
    h('td', null, when(e.at)), h('td', null, who), h('td', null, h('code', null, e.action)),
    h('td', null, e.target || ''), h('td', { class: 'detail' }, detail), h('td', null, e.ip || ''));
}
