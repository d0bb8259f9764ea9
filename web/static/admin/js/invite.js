// Accepting an invite: with the one-time token of their link
// (#/invite/<token>) the invited person chooses a password (or, having an
// account, gives its password) and is signed in.

import { api, creds } from './api.js';
import { h, field, errorBox, busy } from './dom.js';

/** inviteView renders the set-a-password form; done runs once signed in. */
export function inviteView(token, done) {
  const out = h('div', { 'aria-live': 'polite' });
  const password = h('input', { type: 'password', name: 'new_password', autocomplete: 'new-password', required: true, minlength: 12, maxlength: 72 });
  const again = h('input', { type: 'password', name: 'repeat_password', autocomplete: 'new-password', required: true });
  const form = h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      if (password.value !== again.value) {
        out.replaceChildren(errorBox(new Error('The two passwords differ.')));
        return;
      }
      busy(e.submitter, async () => {
        creds.clear();
        await api('POST', '/v1/auth/accept-invite', { token, password: password.value });
        history.replaceState(null, '', location.pathname); // the link works once; keep it out of the address bar
        await done();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, h('h2', null, 'Choose your password'),
  field('Password', password, 'New to Parley: choose one of at least 12 characters (a few unrelated words make a good one; common passwords are refused). Already have an account with this email: enter its password.'),
  field('Repeat it', again),
  h('button', { type: 'submit' }, 'Set password and sign in'));
  return h('main', { class: 'signin' },
    h('h1', null, h('span', { class: 'brand' }, 'Parley'), ' admin'),
    h('p', { class: 'lead' }, 'You were invited to a team. Set your password (or enter the one you have) to join.'),
    out, h('div', { class: 'card' }, form));
}
