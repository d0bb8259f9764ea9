// The operators' inbox: dialogs the bot handed to a person, the longest
// wait first, live (the inbox's event stream), and the chosen dialog's
// transcript, also live (the dialog's event stream), with what an operator
// does: take it, reply, hand it back to the bot, close it.

import { api, follow, tenantPath } from './api.js';
import { h, mount, card, when, errorBox, busy, field } from './dom.js';
import { message, shortId } from './dialogs.js';

/** myOperatorId is the operator id the server gives the signed-in caller. */
function myOperatorId(me) {
  if (me.kind === 'session') return me.user.id;
  if (me.kind === 'key') return 'key:' + me.key.id;
  return 'platform';
}

/** waited says how long ago ts was, briefly. */
function waited(ts) {
  const s = Math.max(0, Math.round((Date.now() - new Date(ts).getTime()) / 1000));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.round(s / 60) + ' min';
  return Math.round(s / 3600) + ' h';
}

/** inboxView renders #/t/<tenant>/inbox and, with an id, that dialog open. */
export async function inboxView({ tenant, params: [chosen], me }) {
  const stop = new AbortController();
  window.addEventListener('hashchange', () => stop.abort(), { once: true });
  const mine = myOperatorId(me);
  const list = h('ol', { class: 'inbox-list', 'aria-label': 'Waiting dialogs' });
  const counts = h('p', { class: 'muted', 'aria-live': 'polite' });
  const detail = h('div', { class: 'inbox-detail' });
  let current = chosen || '';
  let entries = [];

  const link = (id) => `#/t/${encodeURIComponent(tenant)}/inbox/${encodeURIComponent(id)}`;
  // The filter outlives a reload of the page, per browser.
  let filter = localStorage.getItem('parley.inbox.filter') || 'all';
  const shown = () => entries.filter((e) => filter === 'all' || (filter === 'mine' ? e.operator === mine : !e.operator));
  const filters = h('div', { class: 'inbox-filters', role: 'group', 'aria-label': 'Show' },
    [['mine', 'Mine'], ['unassigned', 'Unassigned'], ['all', 'All']].map(([value, label]) => h('button', {
      type: 'button', class: 'small ghost', 'data-filter': value, 'aria-pressed': String(filter === value),
      onclick: () => { filter = value; localStorage.setItem('parley.inbox.filter', value); drawList(); },
    }, label)));
  const lastWords = (m) => m ? h('span', { class: 'inbox-last' }, { user: 'Visitor', assistant: 'Bot', operator: 'Operator' }[m.kind] || m.kind, ': ', m.text) : null;
  const drawList = () => {
    counts.textContent = `${entries.filter((e) => !e.operator).length} waiting · ${entries.filter((e) => e.operator).length} taken`;
    for (const b of filters.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.filter === filter));
    const rows = shown();
    mount(list, rows.length ? rows.map((e) => h('li', { class: 'inbox-item' + (e.dialog.id === current ? ' current' : ''), 'data-dialog': e.dialog.id },
      h('a', { href: link(e.dialog.id) }, h('code', null, shortId(e.dialog.id))),
      e.operator ? h('span', { class: 'badge active inbox-holder' }, e.operator === mine ? 'yours' : e.operator_name) : h('span', { class: 'badge handoff' }, 'waiting'),
      h('span', { class: 'muted inbox-wait', 'data-since': e.requested_at }, 'waiting ', waited(e.requested_at)),
      e.dialog.user_id ? h('span', { class: 'muted' }, e.dialog.user_id) : null,
      e.reason ? h('span', { class: 'inbox-reason' }, e.reason) : null,
      lastWords(e.last_message)))
      : h('li', { class: 'empty' }, entries.length ? 'No dialog matches this filter.' : 'Nobody is waiting for a person.'));
  };
  // Waiting times tick on their own between the inbox's events.
  const tick = setInterval(() => {
    for (const el of list.querySelectorAll('.inbox-wait')) {
      if (el instanceof HTMLElement && el.dataset.since) el.textContent = 'waiting ' + waited(el.dataset.since);
    }
  }, 15000);
  stop.signal.addEventListener('abort', () => clearInterval(tick), { once: true });
  // A dialog that starts waiting while the page is open is announced: in
  // the page, and by the browser when the operator allowed notifications.
  const notice = h('p', { class: 'inbox-notice', role: 'status', hidden: true });
  const canNotify = typeof Notification !== 'undefined';
  const notifyButton = canNotify && Notification.permission === 'default' ? h('button', {
    type: 'button', class: 'small ghost',
    onclick: () => Notification.requestPermission().then(() => { notifyButton.hidden = true; }),
  }, 'Notify me of new dialogs') : null;
  let seen = /** @type {Set<string> | null} */ (null);
  follow(() => tenantPath(tenant, 'inbox'), (type, ev) => {
    if (type !== 'inbox') return;
    entries = ev.dialogs;
    const arrived = seen ? entries.filter((e) => !e.operator && !seen.has(e.dialog.id)) : [];
    seen = new Set(entries.map((e) => e.dialog.id));
    if (arrived.length) {
      const what = arrived.length === 1 ? `A new dialog waits for a person${arrived[0].reason ? ': ' + arrived[0].reason : '.'}` : `${arrived.length} new dialogs wait for a person.`;
      notice.textContent = what;
      notice.hidden = false;
      if (canNotify && Notification.permission === 'granted' && document.hidden) new Notification('Parley inbox', { body: what });
    }
    drawList();
  }, stop.signal, (err) => mount(list, h('li', null, errorBox(err))));

  // Keyboard: j and k move through the list, a takes the open dialog, r
  // goes to the reply box, ? shows these keys. Not while typing.
  const help = h('div', { class: 'shortcut-help card', hidden: true, role: 'dialog', 'aria-label': 'Keyboard shortcuts' },
    h('h3', null, 'Keyboard shortcuts'),
    h('dl', null, [['j / k', 'next / previous dialog'], ['a', 'assign the open dialog to me'], ['r', 'reply'], ['?', 'show or hide this help']]
      .map(([k, v]) => [h('dt', null, h('kbd', null, k)), h('dd', null, v)])));
  const onKey = (/** @type {KeyboardEvent} */ e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey || (t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName)))) return;
    const rows = shown();
    const at = rows.findIndex((r) => r.dialog.id === current);
    if (e.key === 'j' || e.key === 'k') {
      const next = rows[e.key === 'j' ? Math.min(rows.length - 1, at + 1) : Math.max(0, at - 1)];
      if (next && next.dialog.id !== current) location.hash = link(next.dialog.id);
    } else if (e.key === 'a') {
      const take = detail.querySelector('button[data-action="take"]');
      if (take instanceof HTMLButtonElement) take.click();
    } else if (e.key === 'r') {
      const box = detail.querySelector('.reply-form textarea');
      if (box instanceof HTMLTextAreaElement) { e.preventDefault(); box.focus(); }
    } else if (e.key === '?') {
      help.hidden = !help.hidden;
    } else return;
  };
  document.addEventListener('keydown', onKey);
  stop.signal.addEventListener('abort', () => document.removeEventListener('keydown', onKey), { once: true });

  // What the team shares on this page: its canned replies and its
  // members who may answer dialogs (to assign one to).
  const team = { canned: /** @type {any[]} */ ([]), members: /** @type {any[]} */ ([]) };
  const cannedCard = h('details', { class: 'canned' }, h('summary', null, 'Canned replies'), h('div', null));
  const loadCanned = async () => {
    try {
      team.canned = (await api('GET', tenantPath(tenant, 'canned-replies'))).canned_replies;
      mount(/** @type {HTMLElement} */ (cannedCard.lastElementChild), cannedManager(tenant, team.canned, loadCanned));
    } catch (err) {
      mount(/** @type {HTMLElement} */ (cannedCard.lastElementChild), errorBox(err));
    }
  };
  loadCanned();
  api('GET', tenantPath(tenant, 'members')).then((r) => {
    team.members = r.members.filter((m) => !m.pending && m.role !== 'viewer');
  }).catch(() => {}); // without the list, only "Take" is offered

  if (current) openDialog(tenant, current, mine, detail, stop.signal, team);
  else mount(detail, h('p', { class: 'empty' }, 'Choose a dialog to read it and take it.'));

  return h('div', null, h('h1', null, 'Inbox'), counts, notice, notifyButton, help,
    h('div', { class: 'inbox' }, h('div', null, card(null, filters, list), card(null, cannedCard)), detail));
}

/** How long "Visitor is typing…" shows without another typing event, in ms. */
const TYPING_FOR = 6000;

// openDialog shows one dialog's transcript and actions, redrawn whenever
// its live stream says something happened.
function openDialog(tenant, id, mine, detail, signal, team) {
  let lastSeq = 0;
  let drawing = null;
  let again = false;
  const out = h('div', { 'aria-live': 'polite' });
  // The reply box outlives redraws, which come with every message of the
  // dialog: a new box would take the operator's cursor and focus mid-word.
  const draft = { box: null, note: null, offers: null };
  // What the visitor's side shows besides messages (docs/api.md, "Typing
  // and read marks"): that they type, and how far they have read; and
  // how far this side has read, told to the visitor once.
  const presence = {
    typing: h('p', { class: 'visitor-typing muted', role: 'status', hidden: true }, 'Visitor is typing…'),
    timer: 0, visitorRead: 0, readSent: 0, newest: 0, handedOff: false,
  };
  const typingStops = () => { clearTimeout(presence.timer); presence.typing.hidden = true; };
  const markRead = () => {
    if (!presence.handedOff || document.hidden || presence.newest <= presence.readSent) return;
    presence.readSent = presence.newest;
    api('POST', tenantPath(tenant, 'dialogs', id, 'read'), { seq: presence.newest }).catch(() => { presence.readSent = 0; });
  };
  // seen marks the newest operator message the visitor has read.
  const seen = () => {
    for (const old of detail.querySelectorAll('.seen-mark')) old.remove();
    const read = Array.from(detail.querySelectorAll('.transcript li.operator[data-seq]'))
      .filter((li) => li instanceof HTMLElement && Number(li.dataset.seq) <= presence.visitorRead);
    if (read.length) read[read.length - 1].append(h('p', { class: 'seen-mark muted' }, 'Seen'));
  };
  const onVisible = () => markRead();
  document.addEventListener('visibilitychange', onVisible);
  signal.addEventListener('abort', () => { document.removeEventListener('visibilitychange', onVisible); typingStops(); }, { once: true });
  const redraw = async () => {
    if (drawing) { again = true; return; }
    drawing = (async () => {
      do {
        again = false;
        try {
          const [d, inbox, notes] = await Promise.all([api('GET', tenantPath(tenant, 'dialogs', id)), api('GET', tenantPath(tenant, 'inbox')),
            api('GET', tenantPath(tenant, 'dialogs', id, 'notes'))]);
          const hand = inbox.dialogs.find((e) => e.dialog.id === id) || null;
          const earlier = d.user_id ? (await api('GET', tenantPath(tenant, 'dialogs') + '?limit=11&user_id=' + encodeURIComponent(d.user_id))).dialogs
            .filter((e) => e.id !== id).slice(0, 10) : [];
          const focused = document.activeElement;
          mount(detail, view(tenant, d, hand, mine, out, draft, redraw, notes.notes, team, presence.typing),
            visitorPanel(tenant, d, earlier));
          if (focused instanceof HTMLElement && focused.isConnected && focused !== document.activeElement) focused.focus();
          presence.handedOff = Boolean(hand);
          presence.newest = Math.max(0, ...(d.messages || []).map((m) => m.seq || 0));
          seen();
          markRead();
        } catch (err) {
          mount(detail, errorBox(err));
        }
      } while (again);
      drawing = null;
    })();
  };
  redraw();
  // A closed dialog's stream ends for good: stop following it.
  const own = new AbortController();
  signal.addEventListener('abort', () => own.abort(), { once: true });
  follow(() => tenantPath(tenant, 'dialogs', id, 'events') + '?after=' + lastSeq, (type, ev) => {
    if (ev.message) lastSeq = Math.max(lastSeq, ev.message.seq);
    if (type === 'message' && ev.message.kind === 'user') typingStops();
    if (type === 'message' || type === 'operator_message' || type === 'handoff') redraw();
    if (type === 'typing' && ev.who === 'user') {
      presence.typing.hidden = false;
      clearTimeout(presence.timer);
      presence.timer = setTimeout(typingStops, TYPING_FOR);
    }
    if (type === 'read' && ev.who === 'user') {
      presence.visitorRead = Math.max(presence.visitorRead, ev.seq);
      seen();
    }
    if (type === 'handoff' && ev.status === 'closed') own.abort();
  }, own.signal, (err) => mount(out, errorBox(err)));
}

// visitorPanel is who the end user is: their id, the dialog's context
// variables (a signed user token's claims fill its identity variables)
// and links to their earlier dialogs.
function visitorPanel(tenant, d, earlier) {
  const vars = Object.entries(d.context || {});
  return card(null, h('section', { class: 'visitor', 'aria-label': 'The visitor' },
    h('h3', null, 'Visitor'),
    h('p', null, d.user_id ? h('code', null, d.user_id) : h('span', { class: 'muted' }, 'Anonymous'), ' · ', d.channel),
    vars.length ? h('dl', { class: 'visitor-context' }, vars.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])) : h('p', { class: 'muted' }, 'No context variables.'),
    d.user_id ? h('h4', null, 'Earlier dialogs') : null,
    d.user_id ? (earlier.length ? h('ul', { class: 'visitor-dialogs' }, earlier.map((e) => h('li', null,
      h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs/${encodeURIComponent(e.id)}` }, h('code', null, shortId(e.id))),
      ' ', when(e.created_at), ' ', h('span', { class: 'badge ' + e.status }, e.status))))
      : h('p', { class: 'muted' }, 'None.')) : null));
}

/**
 * handoffBrief is why the bot handed the dialog off and what it told the
 * person who takes over: the newest handoff_to_human call's arguments.
 * @returns {{reason: string, summary: string} | null}
 */
function handoffBrief(d) {
  const calls = (d.tool_calls || []).filter((c) => c.name === 'handoff_to_human');
  const args = calls.length ? calls[calls.length - 1].arguments : null;
  if (!args || typeof args !== 'object') return null;
  return { reason: String(args.reason || ''), summary: String(args.summary || '') };
}

// banner heads a handed-off dialog with why the bot handed it off, so the
// operator need not find the tool call in the transcript.
function banner(d, hand) {
  const brief = handoffBrief(d);
  if (!hand && !brief) return null;
  return h('section', { class: 'handoff-banner', 'aria-label': 'Why this dialog was handed off' },
    h('p', null, h('strong', null, hand ? 'Handed off ' : 'Was handed off'), hand ? when(hand.requested_at) : null,
      brief && brief.reason ? [': ', h('span', { class: 'handoff-reason' }, brief.reason)] : null),
    brief && brief.summary ? h('p', { class: 'handoff-summary' }, brief.summary) : null);
}

// notesPanel lists the members' internal notes on the dialog and a box to
// add one. The end user never sees them.
function notesPanel(tenant, d, notes, out, draft, redraw) {
  if (!draft.note) {
    draft.note = h('textarea', { name: 'note', rows: 2, required: true, 'aria-label': 'Internal note', placeholder: 'A note for your team; the visitor never sees it' });
  }
  const box = draft.note;
  return h('section', { class: 'notes', 'aria-label': 'Internal notes' },
    h('h3', null, 'Internal notes'),
    notes.length ? h('ol', { class: 'note-list' }, notes.map((n) => h('li', { class: 'internal-note' },
      h('p', null, n.text), h('p', { class: 'muted' }, n.author_name, ' · ', when(n.created_at)))))
      : h('p', { class: 'muted' }, 'No notes yet.'),
    h('form', {
      class: 'note-form',
      onsubmit: (e) => {
        e.preventDefault();
        busy(e.submitter || e.target.querySelector('button'), async () => {
          await api('POST', tenantPath(tenant, 'dialogs', d.id, 'notes'), { text: box.value });
          box.value = '';
          await redraw();
        }).catch((err) => out.replaceChildren(errorBox(err)));
      },
    }, box, h('button', { type: 'submit', class: 'ghost' }, 'Add note')));
}

// view is the dialog's panel: why it was handed off, status, transcript
// with tool calls, internal notes, and the actions its state allows the
// caller.
function view(tenant, d, hand, mine, out, draft, redraw, notes, team, typing) {
  const act = (fn) => (e) => busy(e.target, async () => { out.replaceChildren(); await fn(); await redraw(); })
    .catch((err) => out.replaceChildren(errorBox(err)));
  const post = (route, body) => api('POST', tenantPath(tenant, 'dialogs', d.id, route), body || {});
  const callsOf = {};
  for (const c of d.tool_calls || []) (callsOf[c.message_id] = callsOf[c.message_id] || []).push(c);
  const holder = hand && hand.operator;
  const actions = [];
  if (hand && !holder) actions.push(h('button', { type: 'button', 'data-action': 'take', onclick: act(() => post('assign')) }, 'Take'));
  if (hand && holder && holder !== mine) actions.push(h('p', { class: 'muted' }, `${hand.operator_name} has taken this dialog.`));
  if (hand) actions.push(h('button', { type: 'button', class: 'ghost', onclick: act(() => post('release')) }, 'Hand back to the bot'));
  const others = team.members.filter((m) => m.user_id !== holder);
  if (hand && (!holder || holder === mine) && others.length) {
    const who = h('select', { name: 'member', 'aria-label': 'Assign to' }, others.map((m) => h('option', { value: m.user_id }, m.email)));
    actions.push(h('span', { class: 'assign' }, who,
      h('button', { type: 'button', class: 'ghost', onclick: act(() => post('assign', { member: who.value })) }, 'Assign')));
  }
  let reply = null;
  if (hand && holder === mine) {
    if (!draft.box) {
      let typed = 0;
      draft.box = h('textarea', {
        name: 'text', rows: 3, required: true, 'aria-label': 'Reply', placeholder: 'Write to the visitor…',
        oninput: () => {
          if (Date.now() - typed > 3000) { typed = Date.now(); post('typing').catch(() => {}); }
          offerCanned(draft, team.canned);
        },
        onkeydown: (/** @type {KeyboardEvent} */ e) => {
          const first = draft.offers && draft.offers.querySelector('button');
          if ((e.key === 'Tab' || e.key === 'Enter') && first instanceof HTMLButtonElement) { e.preventDefault(); first.click(); }
        },
      });
      draft.offers = h('ul', { class: 'canned-offers', 'aria-label': 'Canned replies', hidden: true });
    }
    const text = draft.box;
    reply = h('form', {
      class: 'reply-form',
      onsubmit: (e) => {
        e.preventDefault();
        busy(e.submitter || e.target.querySelector('button'), async () => {
          await post('operator-messages', { text: text.value });
          text.value = '';
          await redraw();
        }).catch((err) => out.replaceChildren(errorBox(err)));
      },
    }, text, draft.offers, h('button', { type: 'submit' }, 'Send'));
  }
  const reason = h('input', { type: 'text', name: 'reason', maxlength: 500, placeholder: 'Why is it over?', 'aria-label': 'Reason' });
  const close = d.status === 'closed' ? h('p', { class: 'muted' }, 'Closed: ', d.closed_reason) : h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      act(() => post('close', { reason: reason.value }))({ target: e.submitter || e.target.querySelector('button') });
    },
  }, field('Close this dialog', reason), h('button', { type: 'submit', class: 'small danger' }, 'Close dialog'));

  return card(null,
    h('div', { class: 'title-row' }, h('h2', null, 'Dialog ', h('code', null, d.id)), h('span', { class: 'badge ' + d.status }, d.status)),
    banner(d, hand),
    h('div', { class: 'actions' }, actions), out,
    h('ol', { class: 'transcript' }, (d.messages || []).map((m) => {
      const li = message(m, callsOf[m.id] || []);
      if (m.kind === 'operator') li.dataset.seq = String(m.seq);
      return li;
    })),
    typing, reply, notesPanel(tenant, d, notes, out, draft, redraw), close);
}

/** cannedTyped is the /shortcut being typed at the end of text, or null. */
function cannedTyped(text) {
  const m = /(^|\s)\/([a-z0-9_-]*)$/.exec(text);
  return m ? { at: m.index + m[1].length, prefix: m[2] } : null;
}

// offerCanned lists the canned replies whose shortcut starts with what
// follows the / the operator just typed; choosing one (click, Tab or
// Enter) puts its text in place of the /shortcut.
function offerCanned(draft, replies) {
  const box = draft.box;
  const typed = cannedTyped(box.value);
  const matches = typed ? replies.filter((r) => r.shortcut.startsWith(typed.prefix)).slice(0, 8) : [];
  draft.offers.hidden = matches.length === 0;
  mount(draft.offers, matches.map((r) => h('li', null, h('button', {
    type: 'button', class: 'small ghost',
    onclick: () => {
      box.value = box.value.slice(0, typed.at) + r.text;
      draft.offers.hidden = true;
      box.focus();
    },
  }, h('code', null, '/' + r.shortcut), ' ', r.text))));
}

// cannedManager lists the tenant's canned replies with a form to add one
// and, per reply, edit (the form takes it) and delete.
function cannedManager(tenant, replies, reload) {
  const out = h('div', null);
  let editing = '';
  const shortcut = h('input', { type: 'text', name: 'shortcut', required: true, maxlength: 40, pattern: '[a-z0-9][a-z0-9_\\-]*', placeholder: 'refund' });
  const text = h('textarea', { name: 'text', rows: 3, required: true, placeholder: 'Your refund is on its way…' });
  const submit = h('button', { type: 'submit', class: 'small' }, 'Add');
  const fail = (err) => out.replaceChildren(errorBox(err));
  return h('div', null,
    replies.length ? h('ul', { class: 'canned-list' }, replies.map((r) => h('li', { 'data-shortcut': r.shortcut },
      h('code', null, '/' + r.shortcut), ' ', h('span', null, r.text), ' ',
      h('button', { type: 'button', class: 'small ghost', onclick: () => { editing = r.id; shortcut.value = r.shortcut; text.value = r.text; submit.textContent = 'Save'; } }, 'Edit'),
      h('button', { type: 'button', class: 'small ghost danger', onclick: (e) => busy(e.target, async () => { await api('DELETE', tenantPath(tenant, 'canned-replies', r.id)); await reload(); }).catch(fail) }, 'Delete'))))
      : h('p', { class: 'muted' }, 'None yet. Type /shortcut in a reply to insert one.'),
    h('form', {
      class: 'canned-form',
      onsubmit: (e) => {
        e.preventDefault();
        const body = { shortcut: shortcut.value, text: text.value };
        busy(e.submitter || submit, async () => {
          if (editing) await api('PATCH', tenantPath(tenant, 'canned-replies', editing), body);
          else await api('POST', tenantPath(tenant, 'canned-replies'), body);
          await reload();
        }).catch(fail);
      },
    }, field('Shortcut', shortcut), field('Text', text), submit),
    out);
}
