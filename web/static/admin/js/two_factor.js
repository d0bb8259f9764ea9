// Two-factor sign-in: an authenticator app's codes on top of the password
// (docs/sso.md, "Two-factor sign-in"). Enrolment shows the secret as text
// to type into the app and as an otpauth:// link, takes a current code,
// then shows the recovery codes once; the sign-in page's second step takes
// a code or a recovery code.

import { api, tenantPath } from './api.js';
import { h, mount, field, errorBox, notice, when, busy } from './dom.js';

/**
 * enrolPanel walks through enrolment: secret, code, recovery codes.
 * challenge is the sign-in's when a tenant requires two-factor before a
 * session ('' when signed in); done runs after "I saved them".
 * @param {string} challenge
 * @param {() => any} done
 */
export async function enrolPanel(challenge, done) {
  const out = h('div', { 'aria-live': 'polite' });
  const panel = h('div', { class: 'stack totp-enrol' });
  /** @type {{secret: string, uri: string}} */
  const e = await api('POST', '/v1/auth/totp', challenge ? { challenge } : {});
  const code = h('input', { name: 'totp_code', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9 ]{6,7}', required: true });
  const form = h('form', {
    class: 'stack',
    onsubmit: (ev) => {
      ev.preventDefault();
      busy(ev.submitter, async () => {
        /** @type {{recovery_codes: string[]}} */
        const r = await api('POST', '/v1/auth/totp/confirm', { code: code.value.trim(), challenge: challenge || undefined });
        mount(panel, recoveryCodes(r.recovery_codes, done));
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Code from the app', code, 'The 6 digits it shows now.'), h('div', null, h('button', { type: 'submit' }, 'Turn on')));
  mount(panel,
    h('p', null, 'Add an account to your authenticator app (Google Authenticator, 1Password, Authy, ...) with this key:'),
    h('p', null, h('code', { class: 'totp-secret', 'data-secret': e.secret }, e.secret.replace(/(.{4})/g, '$1 ').trim())),
    h('p', null, 'Or open this link on the device with the app: ', h('a', { href: e.uri, class: 'totp-uri' }, e.uri)),
    h('p', null, h('small', null, 'Time-based, SHA-1, 6 digits, every 30 seconds.')),
    out, form);
  return panel;
}

/** recoveryCodes shows the recovery codes once, until "I saved them". */
function recoveryCodes(codes, done) {
  return h('div', { class: 'alert ok once', role: 'status' },
    h('strong', null, 'Two-factor is on. Save these recovery codes now: each signs you in once without the app, and they are not shown again.'),
    h('ul', { class: 'recovery-codes' }, codes.map((c) => h('li', null, h('code', null, c)))),
    h('button', { type: 'button', onclick: () => done() }, 'I saved them'));
}

/** twoFactorCard is Your account's two-factor section. */
export async function twoFactorCard() {
  const body = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const fail = (err) => out.replaceChildren(errorBox(err));
  const draw = async () => {
    out.replaceChildren();
    /** @type {{enabled: boolean, enabled_at?: string, recovery_codes_left: number}} */
    const st = await api('GET', '/v1/auth/totp');
    if (!st.enabled) {
      mount(body, h('p', { class: 'totp-state' }, 'Off: your password alone signs you in.'),
        h('button', {
          type: 'button',
          onclick: (e) => busy(e.target, async () => mount(body, await enrolPanel('', draw))).catch(fail),
        }, 'Turn on two-factor'));
      return;
    }
    const proof = h('input', { type: 'password', name: 'totp_off_password', autocomplete: 'current-password', required: true });
    mount(body, h('p', { class: 'totp-state' }, `On since ${when(st.enabled_at)}; ${st.recovery_codes_left} recovery codes left.`),
      h('form', {
        class: 'row-form',
        onsubmit: (e) => {
          e.preventDefault();
          busy(e.submitter, async () => {
            const v = proof.value.trim();
            await api('DELETE', '/v1/auth/totp', /^[0-9]{6}$/.test(v) ? { code: v } : { password: proof.value });
            await draw();
            out.replaceChildren(notice('Two-factor is off.'));
          }).catch(fail);
        },
      }, field('Password or current code', proof), h('button', { type: 'submit', class: 'danger' }, 'Turn off')));
  };
  await draw();
  return h('div', null, out, body);
}

/**
 * secondStep is the sign-in page's second step after a password:
 * a code, or a recovery code; or enrolment when a tenant requires it.
 * @param {{two_factor: string, challenge: string}} step
 * @param {() => any} done
 */
export async function secondStep(step, done) {
  if (step.two_factor === 'enrol') {
    return h('div', { class: 'card' }, h('h2', null, 'Set up two-factor sign-in'),
      h('p', null, 'Your organisation requires a second factor. Set it up now to finish signing in.'),
      await enrolPanel(step.challenge, done));
  }
  const out = h('div', { 'aria-live': 'polite' });
  const fail = (err) => out.replaceChildren(errorBox(err));
  const code = h('input', { name: 'totp_code', inputmode: 'numeric', autocomplete: 'one-time-code', required: true });
  const recovery = h('input', { name: 'recovery_code', autocomplete: 'off' });
  const codeField = field('Code from your authenticator app', code);
  const recoveryField = field('Recovery code', recovery, 'One of the codes you saved; each works once.');
  recoveryField.hidden = true;
  const toggle = h('a', {
    href: '#', class: 'use-recovery',
    onclick: (e) => {
      e.preventDefault();
      const useRecovery = recoveryField.hidden;
      recoveryField.hidden = !useRecovery;
      codeField.hidden = useRecovery;
      code.required = !useRecovery;
      recovery.required = useRecovery;
      toggle.textContent = useRecovery ? 'Use a code from the app' : 'Use a recovery code';
    },
  }, 'Use a recovery code');
  const form = h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const body = recoveryField.hidden ? { challenge: step.challenge, code: code.value.trim() }
        : { challenge: step.challenge, recovery_code: recovery.value.trim() };
      busy(e.submitter, async () => {
        await api('POST', '/v1/auth/totp/verify', body);
        await done();
      }).catch(fail);
    },
  }, h('h2', null, 'Two-factor sign-in'), out, codeField, recoveryField, toggle, h('button', { type: 'submit' }, 'Verify'));
  return h('div', { class: 'card' }, form);
}

/**
 * requireTwoFactor is the tenant's "require two-factor" switch, beside
 * "require single sign-on" on the Members page.
 * @param {string} tenant
 */
export async function requireTwoFactor(tenant) {
  const out = h('div', { 'aria-live': 'polite' });
  const box = h('input', { type: 'checkbox', name: 'require_two_factor' });
  /** @type {{require_two_factor: boolean}} */
  const t = await api('GET', tenantPath(tenant));
  box.checked = t.require_two_factor;
  box.addEventListener('change', () => {
    const want = box.checked;
    api('PATCH', tenantPath(tenant), { require_two_factor: want })
      .then(() => out.replaceChildren(notice(want ? 'Two-factor is required.' : 'Two-factor is no longer required.')))
      .catch((err) => { box.checked = !want; out.replaceChildren(errorBox(err)); });
  });
  return h('div', { class: 'stack' },
    h('label', { class: 'check' }, box, ' Require two-factor: members signing in with a password set up an authenticator app first (single sign-on is not asked)'),
    out);
}
