// API keys: server keys (sk_) with scopes, publishable widget keys (pk_)
// bound to a bot and origins. A new server key is shown once: only its
// hash, prefix and last four characters are kept. A publishable key is
// public by design (it is in every page that embeds the widget), so it is
// shown with its snippet whenever asked, and its origins can be edited.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table, errorBox, when, busy, notice } from './dom.js';

/** keysView renders #/t/<tenant>/keys. */
export async function keysView({ tenant }) {
  const list = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const { bots } = await api('GET', tenantPath(tenant, 'bots'));
  // Keys name their bot by id; people and the widget snippet use the slug.
  const slugOf = Object.fromEntries(bots.map((b) => [b.id, b.slug]));

  const draw = async () => {
    const { api_keys: keys } = await api('GET', tenantPath(tenant, 'api-keys'));
    mount(list, table(['Name', 'Key', 'Scopes', 'Bot · origins', 'Expires', 'Last used', ''], keys.map((k) => h('tr', { class: k.revoked_at ? 'revoked' : null },
      h('td', null, k.name),
      h('td', null, h('code', null, `${k.prefix}…${k.last4}`),
        k.key && !k.revoked_at ? [' ', h('button', { type: 'button', class: 'small ghost', onclick: () => out.replaceChildren(widgetKey(tenant, k, slugOf[k.bot] || k.bot, false)) }, 'Show key')] : null),
      h('td', null, (k.scopes || []).join(', ')),
      h('td', { class: 'origins' }, k.bot ? [h('code', null, slugOf[k.bot] || k.bot), ' ', (k.origins || []).join(', '),
        k.revoked_at ? null : [' ', h('button', { type: 'button', class: 'small ghost', onclick: (e) => editOrigins(tenant, k, e.target, out, draw) }, 'Edit origins')]] : '—'),
      h('td', null, k.expires_at ? when(k.expires_at) : 'never'),
      h('td', null, when(k.last_used_at)),
      h('td', { class: 'actions' }, k.revoked_at ? h('span', { class: 'badge' }, 'revoked')
        : h('button', {
          type: 'button', class: 'small danger',
          onclick: (e) => {
            if (!confirm(`Revoke ${k.name}? Anything using it stops working.`)) return;
            busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'api-keys', k.id)); await draw(); })
              .catch((err) => out.replaceChildren(errorBox(err)));
          },
        }, 'Revoke')))), 'No keys.'));
  };
  await draw();
  return h('div', null, h('h1', null, 'API keys'), out,
    card('New key', createForm(tenant, bots, slugOf, out, draw)),
    card('Keys', list));
}

function createForm(tenant, bots, slugOf, out, draw) {
  const name = h('input', { name: 'name', required: true, placeholder: 'website widget' });
  const kind = h('select', { name: 'kind' },
    h('option', { value: 'sk' }, 'Server key (sk_)'), h('option', { value: 'pk' }, 'Publishable widget key (pk_)'));
  const admin = h('input', { type: 'checkbox', name: 'scope_admin' });
  const chat = h('input', { type: 'checkbox', name: 'scope_chat', checked: true });
  const bot = h('select', { name: 'bot' }, bots.map((b) => h('option', { value: b.slug }, b.name)));
  const origins = h('input', { name: 'origins', placeholder: 'https://www.example.com, https://shop.example.com' });
  const expires = h('input', { type: 'date', name: 'expires' });
  const scopes = h('fieldset', { class: 'inline' }, h('legend', null, 'Scopes'),
    h('label', null, admin, ' admin'), h('label', null, chat, ' chat'));
  const widgetFields = h('div', { class: 'row-form', hidden: true },
    field('Bot', bot), field('Allowed origins', origins, 'Comma-separated, scheme and host, e.g. https://www.example.com'));
  kind.addEventListener('change', () => {
    widgetFields.hidden = kind.value !== 'pk';
    scopes.hidden = kind.value === 'pk';
  });

  return h('form', {
    class: 'stack',
    onsubmit: (e) => {
      e.preventDefault();
      const req = { name: name.value, kind: kind.value };
      if (kind.value === 'pk') {
        req.bot = bot.value;
        req.origins = origins.value.split(/[\s,]+/).filter(Boolean);
      } else {
        req.scopes = [admin.checked && 'admin', chat.checked && 'chat'].filter(Boolean);
      }
      if (expires.value) req.expires_at = new Date(expires.value + 'T23:59:59').toISOString();
      busy(e.submitter, async () => {
        const k = await api('POST', tenantPath(tenant, 'api-keys'), req);
        out.replaceChildren(k.kind === 'pk' ? widgetKey(tenant, k, slugOf[k.bot] || k.bot, true) : shownOnce(k));
        e.target.reset();
        widgetFields.hidden = true;
        scopes.hidden = false;
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, h('div', { class: 'row-form' }, field('Name', name), field('Kind', kind), field('Expires', expires, 'Optional.')),
  scopes, widgetFields, h('div', null, h('button', { type: 'submit' }, 'Create key')));
}

const copy = (text) => (e) => navigator.clipboard.writeText(text).then(() => { e.target.textContent = 'Copied'; });

// shownOnce shows a new server key with a copy button, this once.
function shownOnce(k) {
  return h('div', { class: 'alert ok once', role: 'status' },
    h('strong', null, `Key “${k.name}” created. Copy it now: it is not shown again.`),
    h('div', { class: 'secret-row' }, h('code', { class: 'new-key' }, k.key),
      h('button', { type: 'button', class: 'small', onclick: copy(k.key) }, 'Copy')));
}

// widgetKey shows a publishable key and the snippet to paste into the
// site; it can be shown again at any time.
function widgetKey(tenant, k, bot, created) {
  const snippet = `<script src="${location.origin}/widget.js" data-key="${k.key}" data-tenant="${tenant}" data-bot="${bot}" async></script>`;
  return h('div', { class: 'alert ok once widget-key', role: 'status' },
    h('strong', null, created ? `Key “${k.name}” created.` : `Key “${k.name}”.`,
      ' A widget key is public: it goes into your pages, and this page shows it again whenever you need it.'),
    h('div', { class: 'secret-row' }, h('code', { class: 'new-key' }, k.key),
      h('button', { type: 'button', class: 'small', onclick: copy(k.key) }, 'Copy')),
    h('p', null, 'Embed the widget:'), h('pre', null, snippet),
    h('button', { type: 'button', class: 'small ghost', onclick: copy(snippet) }, 'Copy snippet'));
}

// editOrigins replaces the origins cell's button with a small form that
// sets the key's allowed origins (PATCH .../api-keys/{id}).
function editOrigins(tenant, k, button, out, draw) {
  const origins = h('input', { name: 'origins', value: (k.origins || []).join(', '), 'aria-label': `Allowed origins of ${k.name}`, size: 40 });
  const form = h('form', {
    class: 'row-form inline-edit',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        await api('PATCH', tenantPath(tenant, 'api-keys', k.id), { origins: origins.value.split(/[\s,]+/).filter(Boolean) });
        out.replaceChildren(notice(`The origins of “${k.name}” are saved; the key itself is unchanged.`));
        await draw();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, origins, h('button', { type: 'submit', class: 'small' }, 'Save origins'),
  h('button', { type: 'button', class: 'small ghost', onclick: () => draw().catch((err) => out.replaceChildren(errorBox(err))) }, 'Cancel'));
  button.replaceWith(form);
  origins.focus();
}
