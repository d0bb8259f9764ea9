// Members: who may work in the tenant and with which role. Admins invite
// people by email; a person without an account gets a one-time link to
// set a password (shown once, to hand on: Parley sends no email). The last
// owner can be neither demoted nor removed.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, busy } from './dom.js';
import { roleIn, atLeast } from './roles.js';
import { ssoCard } from './sso.js';
import { requireTwoFactor } from './two_factor.js';

const ROLES = ['owner', 'admin', 'editor', 'operator', 'viewer'];

/** membersView renders #/t/<tenant>/members. */
export async function membersView({ tenant, me }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const mine = roleIn(me, tenant);
  const canManage = atLeast(mine, 'admin');
  const fail = (err) => out.replaceChildren(errorBox(err));

  const draw = async () => {
    const { members } = await api('GET', tenantPath(tenant, 'members'));
    mount(list, table(['Email', 'Role', ''], members.map((m) => h('tr', { 'data-email': m.email },
      h('td', null, m.email, m.pending ? h('span', { class: 'badge paused' }, 'invited') : null),
      h('td', null, canManage ? roleSelect(m, (role, select) => busy(select, async () => {
        await api('PATCH', tenantPath(tenant, 'members', m.user_id), { role });
        out.replaceChildren();
        await draw();
      }).catch((err) => { select.value = m.role; fail(err); })) : m.role),
      h('td', { class: 'actions' }, canManage && !m.pending ? h('button', {
        type: 'button', class: 'small',
        onclick: (e) => {
          if (!confirm(`Sign ${m.email} out everywhere? They sign in again to continue.`)) return;
          busy(e.target, async () => {
            const { ended } = await api('DELETE', tenantPath(tenant, 'members', m.user_id, 'sessions'));
            out.replaceChildren(h('div', { class: 'alert ok', role: 'status' }, `Signed ${m.email} out of ${ended} session(s).`));
          }).catch(fail);
        },
      }, 'Sign out everywhere') : null, canManage ? h('button', {
        type: 'button', class: 'small danger',
        onclick: (e) => {
          if (!confirm(`Remove ${m.email} from this tenant?`)) return;
          busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'members', m.user_id)); await draw(); }).catch(fail);
        },
      }, 'Remove') : null))), 'No members.'));
  };
  await draw();
  return h('div', null, h('h1', null, 'Members'), out,
    canManage ? card('Invite someone', inviteForm(tenant, mine, out, draw)) : null,
    card('Members', list),
    canManage ? card('Single sign-on', await ssoCard(tenant)) : null,
    canManage ? card('Two-factor sign-in', await requireTwoFactor(tenant)) : null);
}

function roleSelect(m, change) {
  const select = h('select', { 'aria-label': `Role of ${m.email}`, name: 'role' },
    ROLES.map((r) => h('option', { value: r, selected: r === m.role }, r)));
  select.addEventListener('change', () => change(select.value, select));
  return select;
}

function inviteForm(tenant, mine, out, draw) {
  const email = h('input', { type: 'email', name: 'email', required: true, placeholder: 'ada@example.com' });
  const role = h('select', { name: 'role' }, ROLES.filter((r) => r !== 'owner' || mine === 'owner')
    .map((r) => h('option', { value: r, selected: r === 'editor' }, r)));
  return h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        const inv = await api('POST', tenantPath(tenant, 'members'), { email: email.value, role: role.value });
        out.replaceChildren(invited(inv));
        e.target.reset();
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, h('div', { class: 'row-form' }, field('Email', email), field('Role', role)),
  h('div', null, h('button', { type: 'submit' }, 'Invite')));
}

// invited shows the one-time link of a new invite, or says the person was
// added at once (they had an account).
function invited(inv) {
  if (!inv.invite_path) {
    return h('div', { class: 'alert ok', role: 'status' }, `${inv.email} already had an account and is now ${inv.role}.`);
  }
  const link = location.origin + inv.invite_path;
  return h('div', { class: 'alert ok once', role: 'status' },
    h('strong', null, `Invited ${inv.email} as ${inv.role}. Send them this link now: it is shown once, works once, and expires ${new Date(inv.expires_at).toLocaleDateString()}.`),
    h('div', { class: 'secret-row' }, h('code', { class: 'new-key invite-link' }, link),
      h('button', { type: 'button', class: 'small', onclick: (e) => navigator.clipboard.writeText(link).then(() => { e.target.textContent = 'Copied'; }) }, 'Copy')));
}
