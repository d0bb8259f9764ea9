// Your account: the admin UI sessions you are signed in with (GET
// /v1/auth/sessions), each of which you may end, say on a lost laptop.

import { api } from './api.js';
import { h, mount, card, table, errorBox, when, busy } from './dom.js';
import { twoFactorCard } from './two_factor.js';

const VIA = { password: 'password', two_factor: 'password and code', sso: 'single sign-on', break_glass: 'break-glass password' };

/** accountView renders #/t/<tenant>/account. */
export async function accountView({ me }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const draw = async () => {
    /** @type {{sessions: any[]}} */
    const { sessions } = await api('GET', '/v1/auth/sessions');
    mount(list, table(['Signed in', 'With', 'Expires', ''], sessions.map((s) => h('tr', { 'data-session': s.id },
      h('td', null, when(s.created_at), s.current ? h('span', { class: 'badge' }, 'this browser') : null),
      h('td', null, VIA[s.via] || s.via),
      h('td', null, when(s.expires_at)),
      h('td', { class: 'actions' }, s.current ? null : h('button', {
        type: 'button', class: 'small danger',
        onclick: (e) => busy(e.target, async () => {
          await api('DELETE', '/v1/auth/sessions/' + encodeURIComponent(s.id));
          await draw();
        }).catch((err) => out.replaceChildren(errorBox(err))),
      }, 'Sign out')))), 'No sessions: you are signed in with an API key.'));
  };
  await draw();
  return h('div', null, h('h1', null, 'Your account'),
    h('p', null, me.user ? me.user.email : ''), out,
    me.user ? card('Two-factor sign-in', await twoFactorCard()) : null, card('Sessions', list));
}
