// The admin UI's entry point: finds out who is signed in, draws the frame
// (tenant picker, navigation) and routes "#/t/<tenant>/<page>" hashes to
// the view modules.

import { api, creds, follow, tenantPath, ApiError } from './api.js';
import { h, mount, errorBox, busy } from './dom.js';
import { signIn, signOut } from './signin.js';
import { botsView } from './bots.js';
import { botView } from './bot.js';
import { keysView } from './keys.js';
import { secretsView } from './secrets.js';
import { providersView } from './providers.js';
import { webhooksView } from './webhooks.js';
import { channelsView } from './channels.js';
import { dialogsView, dialogView } from './dialogs.js';
import { usageView } from './usage.js';
import { insightsView } from './insights.js';
import { membersView } from './members.js';
import { auditView } from './audit.js';
import { inviteView } from './invite.js';
import { accountView } from './account.js';
import { roleIn, atLeast } from './roles.js';
import { inboxView } from './inbox.js';
import { knowledgeView, knowledgeBaseView } from './knowledge.js';
import { mayLeave, unguard } from './leave.js';

const root = document.getElementById('app');

// routes: a hash pattern after "#/t/<tenant>" and its view.
/** @type {[RegExp, (at: {tenant: string, params: string[], me: any}) => Promise<Node>][]} */
const routes = [
  [/^\/?$/, botsView],
  [/^\/bots\/([^/]+)$/, botView],
  [/^\/keys$/, keysView],
  [/^\/secrets$/, secretsView],
  [/^\/providers$/, providersView],
  [/^\/webhooks$/, webhooksView],
  [/^\/channels$/, channelsView],
  [/^\/dialogs$/, dialogsView],
  [/^\/dialogs\/([^/]+)$/, dialogView],
  [/^\/usage$/, usageView],
  [/^\/insights$/, insightsView],
  [/^\/members$/, membersView],
  [/^\/audit$/, auditView],
  [/^\/inbox$/, inboxView],
  [/^\/inbox\/([^/]+)$/, inboxView],
  [/^\/knowledge$/, knowledgeView],
  [/^\/knowledge\/([^/]+)$/, knowledgeBaseView],
  [/^\/account$/, accountView],
];

// nav: each section with the least role whose work it is; weaker roles do
// not see it (the API refuses them anyway).
const nav = [['', 'Bots', 'viewer'], ['/inbox', 'Inbox', 'operator'], ['/dialogs', 'Dialogs', 'viewer'], ['/knowledge', 'Knowledge', 'viewer'], ['/keys', 'API keys', 'admin'],
  ['/secrets', 'Secrets', 'editor'], ['/providers', 'Providers', 'editor'], ['/webhooks', 'Webhooks', 'admin'], ['/channels', 'Channels', 'admin'],
  ['/members', 'Members', 'viewer'], ['/audit', 'Audit log', 'admin'], ['/usage', 'Usage', 'viewer'],
  ['/insights', 'Insights', 'viewer']];

let me = null;
let routing = 0; // the latest route() call; an older one that finishes late draws nothing

async function whoAmI() {
  try {
    return await api('GET', '/v1/auth/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/** tenants lists what the caller may open: memberships, all tenants for the operator, or the key's tenant. */
async function tenantsOf(who) {
  if (who.kind === 'session') return (who.memberships || []).map((m) => ({ slug: m.tenant.slug, name: m.tenant.name, role: m.role }));
  if (who.kind === 'platform') return (await api('GET', '/v1/tenants')).tenants.map((t) => ({ slug: t.slug, name: t.name }));
  return [{ slug: creds.tenant(), name: creds.tenant() }];
}

function parseHash() {
  const m = location.hash.match(/^#\/t\/([^/]+)(.*)$/);
  return m ? { tenant: decodeURIComponent(m[1]), rest: m[2] } : null;
}

async function route() {
  const mine = ++routing;
  unguard();
  const invite = location.hash.match(/^#\/invite\/([^/]+)$/);
  if (invite) {
    mount(root, inviteView(decodeURIComponent(invite[1]), async () => { me = null; location.hash = ''; await route(); }));
    return;
  }
  if (!me) me = await whoAmI();
  if (mine !== routing) return;
  if (!me) {
    mount(root, signIn(async () => { me = null; await route(); }));
    return;
  }
  me.tenants = me.tenants || (await tenantsOf(me));
  if (mine !== routing) return;
  const at = parseHash();
  if (!at) {
    const first = creds.tenant() || (me.tenants[0] && me.tenants[0].slug);
    if (!first) {
      mount(root, frame(null, h('p', { class: 'empty' }, 'You are not a member of any tenant yet.')));
      return;
    }
    location.replace('#/t/' + encodeURIComponent(first));
    return;
  }
  creds.rememberTenant(at.tenant);
  watchInbox(at.tenant);
  const main = h('main', { id: 'main', tabindex: '-1' }, h('p', { class: 'loading' }, 'Loading…'));
  mount(root, frame(at, main));
  for (const [re, view] of routes) {
    const m = at.rest.match(re);
    if (!m) continue;
    try {
      const node = await view({ tenant: at.tenant, params: m.slice(1).map(decodeURIComponent), me });
      if (mine !== routing) return;
      mount(main, node);
      document.title = (main.querySelector('h1') || { textContent: 'Admin' }).textContent + ' · Parley';
    } catch (err) {
      mount(main, errorBox(err));
    }
    return;
  }
  mount(main, errorBox(new Error('No such page.')));
}

// sectionOf names the navigation entry a page belongs to: a bot's page is
// under Bots, a dialog's under Dialogs.
function sectionOf(rest) {
  const first = rest.split('/')[1] || '';
  return first === '' || first === 'bots' ? '' : '/' + first;
}

// The inbox count in the navigation: one live stream of the tenant's
// inbox for as long as the tenant is open (callers who may not answer
// dialogs get none, and no count).
let waiting = 0;
let watched = null; // { tenant, stop }
function watchInbox(tenant) {
  if (watched && watched.tenant === tenant) return;
  if (watched) watched.stop.abort();
  watched = { tenant, stop: new AbortController() };
  waiting = 0;
  follow(() => tenantPath(tenant, 'inbox'), (type, ev) => {
    if (type !== 'inbox') return;
    waiting = ev.waiting;
    showCount();
  }, watched.stop.signal, () => {});
}
function showCount() {
  const el = document.getElementById('inbox-count');
  if (!el) return;
  el.textContent = String(waiting);
  el.hidden = waiting === 0;
  el.setAttribute('aria-label', `${waiting} waiting`);
}

function frame(at, main) {
  const signOutFailed = h('div', { class: 'signout-failed' });
  const here = at ? sectionOf(at.rest) : null;
  const picker = h('select', {
    'aria-label': 'Tenant',
    onchange: (e) => { location.hash = '#/t/' + encodeURIComponent(e.target.value); },
  }, me.tenants.map((t) => h('option', { value: t.slug, selected: at && t.slug === at.tenant }, t.name || t.slug)));
  const who = me.user ? me.user.email : me.kind === 'key' ? `key ${me.key.prefix}…${me.key.last4}` : 'platform operator';
  return [
    h('header', { class: 'top' },
      h('a', { class: 'brand', href: '#/' }, 'Parley'),
      at ? picker : null,
      at ? h('nav', { 'aria-label': 'Sections' }, nav.filter(([, , need]) => atLeast(roleIn(me, at.tenant), need)).map(([p, label]) =>
        h('a', { href: `#/t/${encodeURIComponent(at.tenant)}${p}`, 'aria-current': here === p ? 'page' : null }, label,
          p === '/inbox' ? h('span', { id: 'inbox-count', class: 'count', hidden: waiting === 0 }, String(waiting)) : null))) : null,
      me.user && at ? h('a', { class: 'who', href: `#/t/${encodeURIComponent(at.tenant)}/account`, title: 'Your account and sessions' }, who)
        : h('span', { class: 'who' }, who),
      h('button', {
        class: 'ghost', type: 'button',
        onclick: async (e) => {
          if (!mayLeave()) return;
          signOutFailed.replaceChildren();
          try {
            await busy(e.currentTarget, signOut);
          } catch (err) {
            signOutFailed.replaceChildren(errorBox(new Error(`Signing out failed, so you are still signed in: ${err.message}`)));
            return;
          }
          me = null; location.hash = ''; await route();
        },
      }, 'Sign out')),
    signOutFailed,
    main,
  ];
}

// Leaving a page with unsaved edits asks first (leave.js). A link is
// stopped before it navigates, so the history stays as it was; the back
// and forward buttons cannot be stopped, so staying puts the page's
// address back as a new entry, without a redraw. here is that address.
let here = location.href;
document.addEventListener('click', (e) => {
  const a = e.target instanceof Element ? e.target.closest('a[href^="#"]') : null;
  if (!a || e.defaultPrevented || a.getAttribute('href') === location.hash) return;
  if (a.classList.contains('skip')) {
    // "Skip to content": "#main" is not a route, so following it would
    // leave the page; the main content of this page takes the focus.
    e.preventDefault();
    document.getElementById('main')?.focus();
    return;
  }
  if (mayLeave()) unguard();
  else e.preventDefault();
}, true);
window.addEventListener('hashchange', () => {
  if (!mayLeave()) {
    history.pushState(history.state, '', here);
    return;
  }
  here = location.href;
  route().catch(showFatal);
});
route().catch(showFatal);

function showFatal(err) {
  mount(root, h('main', null, errorBox(err)));
}
