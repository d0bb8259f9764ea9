// Sign-in: email and password, or single sign-on through an identity
// provider, start a cookie session; an API key (with the tenant it belongs
// to) is kept for this tab only.

import { api, creds } from './api.js';
import { h, field, errorBox, busy } from './dom.js';
import { secondStep } from './two_factor.js';

/** signIn renders both sign-in forms; done runs once either succeeds. */
export function signIn(done) {
  const out = h('div', { 'aria-live': 'polite' });
  const fail = (err) => out.replaceChildren(errorBox(err));

  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const passwordForm = h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        creds.clear();
        const r = await api('POST', '/v1/auth/login', { email: email.value, password: password.value });
        if (r && r.two_factor) {
          // A 202: the password held; a code (or enrolment) comes next.
          out.replaceChildren(await secondStep(r, done));
          forms.hidden = true;
          return;
        }
        await done();
      }).catch(fail);
    },
  }, h('h2', null, 'Email and password'), field('Email', email), field('Password', password),
  h('button', { type: 'submit' }, 'Sign in'));

  const key = h('input', { type: 'password', name: 'api_key', autocomplete: 'off', placeholder: 'sk_…', required: true });
  const tenant = h('input', { type: 'text', name: 'tenant', placeholder: 'acme-outdoor', required: true, value: creds.tenant() || '' });
  const keyForm = h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        creds.useKey(key.value.trim(), tenant.value.trim());
        try {
          await api('GET', '/v1/tenants/' + encodeURIComponent(tenant.value.trim()));
        } catch (err) {
          creds.clear();
          throw err;
        }
        // A new hash routes by itself (hashchange); the same hash needs a nudge.
        const target = '#/t/' + encodeURIComponent(tenant.value.trim());
        if (location.hash !== target) location.hash = target;
        else await done();
      }).catch(fail);
    },
  }, h('h2', null, 'API key'), field('Key', key, 'An admin sk_ key. Kept in this tab only.'), field('Tenant', tenant),
  h('button', { type: 'submit' }, 'Use key'));

  // Single sign-on leaves the page: the provider sends the browser back to
  // /v1/auth/oidc/callback, which sets the session and returns to /admin/.
  const org = h('input', { type: 'text', name: 'sso_tenant', placeholder: 'acme-outdoor', value: creds.tenant() || '' });
  const ssoForm = h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const slug = org.value.trim();
      location.assign('/v1/auth/oidc/login' + (slug ? '?tenant=' + encodeURIComponent(slug) : ''));
    },
  }, h('h2', null, 'Single sign-on'), field('Organisation', org, "Your tenant's slug; empty for this server's own provider."),
  h('button', { type: 'submit' }, 'Sign in with SSO'));

  const forms = h('div', { class: 'signin-forms' }, h('div', { class: 'card' }, passwordForm), h('div', { class: 'card' }, ssoForm), h('div', { class: 'card' }, keyForm));
  return h('main', { class: 'signin' },
    h('h1', null, h('span', { class: 'brand' }, 'Parley'), ' admin'),
    h('p', { class: 'lead' }, 'Author, test and publish your bots.'),
    out, forms);
}

/**
 * signOut ends the cookie session and forgets a key. It throws when the
 * server did not end the session: the person is still signed in and must
 * not be shown the sign-in page as if they were not.
 */
export async function signOut() {
  if (!creds.key()) await api('POST', '/v1/auth/logout');
  creds.clear();
}
