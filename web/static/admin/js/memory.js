// What the tenant's bots remember about one end user across dialogs
// (config "memory"): the notes, newest first, each deletable by admins.

import { api, tenantPath } from './api.js';
import { h, mount, card, table, when, errorBox, busy } from './dom.js';

/** memoryCard lists the notes the tenant's bots keep about userID. */
export async function memoryCard(tenant, userID) {
  const body = h('div');
  const notesPath = tenantPath(tenant, 'end-users', userID, 'memory');

  const load = async () => {
    const { notes } = await api('GET', notesPath);
    mount(body, table(['Key', 'Note', 'Bot', 'Written', ''], notes.map(row),
      'No notes: the bots remember nothing about this user.'));
  };
  const remove = (n) => (e) => {
    if (!confirm(`Delete the note "${n.key}" about ${userID}?`)) return;
    busy(e.target, async () => {
      await api('DELETE', notesPath + '/' + encodeURIComponent(n.id));
      await load();
    }).catch((err) => mount(body, errorBox(err)));
  };
  const row = (n) => h('tr', { 'data-note': n.id },
    h('td', null, h('code', null, n.key)),
    h('td', null, n.value),
    h('td', null, h('code', { title: n.bot_id }, n.bot_id.slice(0, 12))),
    h('td', null, when(n.updated_at)),
    h('td', null, h('button', { type: 'button', class: 'small danger', onclick: remove(n) }, 'Delete')));

  await load();
  return card('Memory of this user',
    h('p', { class: 'muted' }, 'Notes bots with memory keep about ', h('code', null, userID), ' across dialogs and recall in the next ones.'),
    body);
}
