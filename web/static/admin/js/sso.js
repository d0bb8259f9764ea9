// Single sign-on: the tenant's own OpenID Connect provider (PUT /sso),
// just-in-time membership and "require SSO". The client secret is
// write-only, like a tenant secret: the API only says whether there is one.

import { api, tenantPath, ApiError } from './api.js';
import { h, mount, field, errorBox, notice, when, busy } from './dom.js';

const JIT_ROLES = ['', 'admin', 'editor', 'operator', 'viewer'];

/** ssoCard renders the tenant's single sign-on settings and their form. */
export async function ssoCard(tenant) {
  const state = h('p', { class: 'sso-state' });
  const out = h('div', { 'aria-live': 'polite' });
  const issuer = h('input', { type: 'url', name: 'issuer', required: true, placeholder: 'https://login.example.com' });
  const clientID = h('input', { name: 'client_id', required: true, autocomplete: 'off' });
  const secret = h('input', { type: 'password', name: 'client_secret', autocomplete: 'new-password' });
  const role = h('select', { name: 'default_role' }, JIT_ROLES.map((r) => h('option', { value: r }, r || 'nobody (invite only)')));
  const domains = h('input', { name: 'allowed_domains', placeholder: 'example.com, example.org' });
  const requireSSO = h('input', { type: 'checkbox', name: 'require_sso' });
  const callback = location.origin + '/v1/auth/oidc/callback';
  const loginLink = location.origin + '/v1/auth/oidc/login?tenant=' + encodeURIComponent(tenant);

  const draw = async () => {
    /** @type {any} */
    let s = null;
    try {
      s = await api('GET', tenantPath(tenant, 'sso'));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    remove.hidden = !s;
    if (!s) {
      mount(state, 'Not configured: members sign in with their passwords.');
      return;
    }
    mount(state, h('span', null, 'Provider ', h('code', null, s.issuer), ', client ', h('code', null, s.client_id),
      s.has_secret ? ' with a secret' : ' without a secret',
      s.default_role ? `; new people from ${s.allowed_domains.join(', ')} join as ${s.default_role}` : '; invite only',
      s.require_sso ? '; SSO required' : '', ` (updated ${when(s.updated_at)}).`));
    issuer.value = s.issuer;
    clientID.value = s.client_id;
    role.value = s.default_role;
    domains.value = s.allowed_domains.join(', ');
    requireSSO.checked = s.require_sso;
  };

  const remove = h('button', {
    type: 'button', class: 'small danger',
    onclick: (e) => {
      if (!confirm('Remove single sign-on? Members sign in with passwords again.')) return;
      busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'sso')); out.replaceChildren(notice('Removed.')); await draw(); })
        .catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, 'Remove');

  const form = h('form', {
    class: 'stack sso-form',
    onsubmit: (e) => {
      e.preventDefault();
      const body = {
        issuer: issuer.value.trim(), client_id: clientID.value.trim(), client_secret: secret.value || undefined,
        default_role: role.value || undefined, require_sso: requireSSO.checked,
        allowed_domains: domains.value.split(',').map((d) => d.trim()).filter((d) => d),
      };
      busy(e.submitter, async () => {
        await api('PUT', tenantPath(tenant, 'sso'), body);
        out.replaceChildren(notice('Saved the single sign-on settings.'));
        secret.value = '';
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, h('div', { class: 'row-form' }, field('Issuer', issuer), field('Client id', clientID),
    field('Client secret', secret, 'Stored encrypted; never shown again. Leave empty to keep the saved one.')),
  h('div', { class: 'row-form' }, field('New people join as', role, 'Just-in-time membership on first sign-in.'),
    field('Allowed email domains', domains, 'Comma-separated; who may join just in time.')),
  h('label', { class: 'check' }, requireSSO, ' Require single sign-on: members may not sign in with a password'),
  h('div', null, h('button', { type: 'submit' }, 'Save')));

  await draw();
  return h('div', null,
    h('p', null, 'Register Parley at your identity provider with the redirect URI ', h('code', null, callback),
      '. Members sign in at ', h('code', null, loginLink), ' or with "Sign in with SSO" and your tenant\'s slug.'),
    state, out, form, remove);
}
