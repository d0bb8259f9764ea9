// Signed end users: how the tenant's user tokens are verified (PUT
// /identity). The secret is write-only, like a tenant secret: the API only
// says whether there is one.

import { api, tenantPath, ApiError } from './api.js';
import { h, mount, field, errorBox, notice, when, busy } from './dom.js';

/** identityCard renders the tenant's identity settings and their form. */
export async function identityCard(tenant) {
  const state = h('p', { class: 'identity-state' });
  const out = h('div', { 'aria-live': 'polite' });
  const draw = async () => {
    let s = null;
    try {
      s = await api('GET', tenantPath(tenant, 'identity'));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    mount(state, !s ? 'Not configured: widget visitors are anonymous, and user tokens are refused.'
      : h('span', null, s.has_secret ? 'HS256 with a secret' : h('span', null, 'Keys from ', h('code', null, s.jwks_url)),
        s.audience ? h('span', null, ', audience ', h('code', null, s.audience)) : '', ` (updated ${when(s.updated_at)}).`));
    remove.hidden = !s;
  };

  const kind = h('select', { name: 'kind' }, h('option', { value: 'secret' }, 'HS256 secret'), h('option', { value: 'jwks' }, 'JWKS URL (RS256/ES256)'));
  const secret = h('input', { type: 'password', name: 'secret', minlength: 32, autocomplete: 'new-password' });
  const jwks = h('input', { type: 'url', name: 'jwks_url', placeholder: 'https://id.example.com/.well-known/jwks.json' });
  const audience = h('input', { name: 'audience', placeholder: 'shop.example' });
  const secretField = field('Secret', secret, 'At least 32 bytes; your backend signs with it. Stored encrypted; never shown again.');
  const jwksField = field('JWKS URL', jwks, 'Public keys with a kid; fetched through the outbound rules.');
  const pick = () => { secretField.hidden = kind.value !== 'secret'; jwksField.hidden = kind.value !== 'jwks'; };
  kind.onchange = pick;
  pick();

  const remove = h('button', {
    type: 'button', class: 'small danger',
    onclick: (e) => {
      if (!confirm('Remove the identity settings? Signed user tokens will be refused.')) return;
      busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'identity')); out.replaceChildren(notice('Removed.')); await draw(); })
        .catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, 'Remove');

  const form = h('form', {
    class: 'row-form identity-form',
    onsubmit: (e) => {
      e.preventDefault();
      const body = { audience: audience.value || undefined };
      if (kind.value === 'secret') body.secret = secret.value; else body.jwks_url = jwks.value;
      busy(e.submitter, async () => {
        await api('PUT', tenantPath(tenant, 'identity'), body);
        out.replaceChildren(notice('Saved the identity settings.'));
        secret.value = '';
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Verify with', kind), secretField, jwksField, field('Audience', audience, 'Optional: tokens must name it in aud.'),
  h('button', { type: 'submit' }, 'Save'));

  await draw();
  return h('div', null,
    h('p', null, 'Your backend signs a short-lived JWT for a signed-in visitor (sub = user id, claims for "identity" context variables); the widget sends it from data-user-token.'),
    state, out, form, remove);
}
