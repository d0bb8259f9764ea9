// The dialogs log: every conversation of the tenant, searchable by the
// words of its messages and filterable by bot, status, end user, feedback
// and date, each with a snippet and counts; one dialog's whole history
// with its tool calls (failed ones marked) and the end user's feedback; and
// the tenant's data rights: export, erasing an end user, retention.

import '/markdown.js';
import { api, download, tenantPath } from './api.js';
import { h, mount, card, field, table, when, json, errorBox, notice, busy } from './dom.js';
import { memoryCard } from './memory.js';

const { render } = globalThis.Parley.markdown;

const statuses = ['active', 'paused', 'handoff', 'closed'];

// Kinds of messages the application writes for itself, never sent to the
// model (docs/events.md): the loop's system events ("switched from ... to
// ...", "run stopped: handoff"), context notes and tool logs. They are
// stored with the user's role, so the role alone would show them as the
// customer's words.
const eventKinds = ['system_event', 'context_note', 'tool_log'];

/**
 * shortId shows a dialog id compactly and still apart from the others: ids
 * begin with their time, so dialogs of the same minute share a prefix and
 * differ at the end.
 * @param {string} id
 */
export function shortId(id) {
  const at = id.indexOf('_') + 1;
  return id.length > at + 12 ? id.slice(0, at) + '…' + id.slice(-10) : id;
}
const feedbacks = [['up', 'Thumbs up'], ['down', 'Thumbs down'], ['any', 'Any feedback'], ['none', 'No feedback']];

/** dialogsView renders #/t/<tenant>/dialogs. */
export async function dialogsView({ tenant }) {
  const { bots } = await api('GET', tenantPath(tenant, 'bots'));
  const botName = Object.fromEntries(bots.map((b) => [b.id, b.name]));
  const bot = h('select', { name: 'bot' }, h('option', { value: '' }, 'All bots'), bots.map((b) => h('option', { value: b.slug }, b.name)));
  const status = h('select', { name: 'status' }, h('option', { value: '' }, 'Any status'), statuses.map((s) => h('option', { value: s }, s)));
  const search = h('input', { type: 'search', name: 'q', maxlength: 200, placeholder: 'Words in a message' });
  const user = h('input', { type: 'text', name: 'user_id', placeholder: 'user-42' });
  const feedback = h('select', { name: 'feedback' }, h('option', { value: '' }, 'Any'), feedbacks.map(([v, t]) => h('option', { value: v }, t)));
  const from = h('input', { type: 'date', name: 'from' });
  const to = h('input', { type: 'date', name: 'to' });
  const outcome = h('select', { name: 'outcome' }, h('option', { value: '' }, 'Any outcome'),
    ['resolved', 'handed_off', 'abandoned', 'failed'].map((o) => h('option', { value: o }, o.replace('_', ' '))));
  const filters = { bot, status, q: search, user_id: user, feedback, outcome, from, to };
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'ghost', hidden: true }, 'Load more');
  const empty = h('p', { class: 'empty', hidden: true }, 'No dialogs match.');
  let cursor = '';
  const out = h('div', { 'aria-live': 'polite' });
  const fail = (err) => out.replaceChildren(errorBox(err));

  const load = async (append) => {
    const q = new URLSearchParams();
    for (const [k, el] of Object.entries(filters)) if (el.value.trim()) q.set(k, el.value.trim());
    q.set('order', 'newest');
    if (append && cursor) q.set('cursor', cursor);
    const page = await api('GET', tenantPath(tenant, 'dialogs') + (q.size ? '?' + q : ''));
    const rows = page.dialogs.map((d) => dialogRow(tenant, d, botName));
    if (append) body.append(...rows); else mount(body, rows);
    cursor = page.next_cursor || '';
    more.hidden = !cursor;
    empty.hidden = body.children.length > 0;
    out.replaceChildren();
  };
  const reload = () => load(false).catch(fail);
  for (const el of [bot, status, feedback, outcome, from, to]) el.addEventListener('change', reload);
  more.addEventListener('click', () => load(true).catch(fail));
  await load(false);

  const exportButton = h('button', {
    type: 'button', class: 'ghost',
    onclick: (e) => {
      const q = new URLSearchParams();
      for (const k of ['bot', 'status', 'from', 'to']) if (filters[k].value) q.set(k, filters[k].value);
      busy(e.target, () => download(tenantPath(tenant, 'dialogs', 'export') + (q.size ? '?' + q : ''), `${tenant}-dialogs.jsonl`)).catch(fail);
    },
  }, 'Export (JSON Lines)');
  const searchForm = h('form', {
    class: 'row-form', role: 'search',
    onsubmit: (e) => { e.preventDefault(); reload(); },
  }, field('Search', search), field('End user', user), h('button', { type: 'submit' }, 'Search'));

  return h('div', null, h('h1', null, 'Dialogs'), out,
    card(null, searchForm,
      h('div', { class: 'row-form' }, field('Bot', bot), field('Status', status), field('Feedback', feedback), field('Outcome', outcome),
        field('From', from), field('To', to), exportButton),
      h('div', { class: 'table-wrap' }, h('table', null,
        h('thead', null, h('tr', null, ['Dialog', 'Bot', 'User', 'Status', 'Snippet', 'Messages', 'Tool errors', 'Feedback', 'Updated']
          .map((t) => h('th', { scope: 'col' }, t)))),
        body)),
      empty, more),
    card('Data rights', await eraseForm(tenant, out, () => load(false)), await retentionForm(tenant, out)));
}

/**
 * dialogRow is one listed dialog with its summary: the snippet (the match
 * of the search, else the first user message) and counts.
 * @param {string} tenant
 * @param {Record<string, any>} d
 * @param {Record<string, string>} botName
 */
function dialogRow(tenant, d, botName) {
  const sum = d.summary || { snippet: '', messages: 0, tool_errors: 0, feedback_up: 0, feedback_down: 0 };
  return h('tr', { 'data-dialog': d.id },
    h('td', null, h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs/${encodeURIComponent(d.id)}`, title: d.id }, h('code', null, shortId(d.id)))),
    h('td', null, botName[d.bot_id] || d.bot_id, ' v' + d.version, d.preview ? h('span', { class: 'badge' }, 'preview') : null),
    h('td', null, d.user_id || '—'),
    h('td', null, h('span', { class: 'badge ' + d.status }, d.status)),
    h('td', { class: 'snippet' }, sum.snippet || '—'),
    h('td', { class: 'n' }, sum.messages),
    h('td', { class: 'n' }, sum.tool_errors ? h('span', { class: 'badge failed' }, sum.tool_errors) : '0'),
    h('td', null, sum.feedback_up ? h('span', { class: 'badge up', title: 'thumbs up' }, '👍 ' + sum.feedback_up) : null,
      sum.feedback_down ? h('span', { class: 'badge down', title: 'thumbs down' }, '👎 ' + sum.feedback_down) : null,
      sum.feedback_up || sum.feedback_down ? null : '—'),
    h('td', null, when(d.updated_at)));
}

// eraseForm deletes every dialog and memory note of one end user.
async function eraseForm(tenant, out, reload) {
  const user = h('input', { name: 'user_id', required: true, placeholder: 'user-42' });
  return h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      if (!confirm(`Erase every dialog, message and memory note of the end user ${user.value}? This cannot be undone.`)) return;
      busy(e.submitter, async () => {
        const got = await api('DELETE', tenantPath(tenant, 'end-users', user.value));
        out.replaceChildren(notice(`Erased ${got.dialogs} dialogs, ${got.messages} messages and ${got.memory_notes} memory notes of ${user.value}.`));
        e.target.reset();
        await reload();
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('End user', user, 'The user_id their dialogs carry.'), h('button', { type: 'submit', class: 'danger' }, 'Erase user'));
}

// retentionForm sets how long the tenant keeps inactive dialogs.
async function retentionForm(tenant, out) {
  const t = await api('GET', tenantPath(tenant));
  const days = h('input', { name: 'retention_days', type: 'number', min: 0, max: 36500, value: t.retention_days || 0 });
  return h('form', {
    class: 'row-form',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        const got = await api('PATCH', tenantPath(tenant), { retention_days: Number(days.value) });
        out.replaceChildren(notice(got.retention_days
          ? `Dialogs are deleted ${got.retention_days} days after their last activity.` : 'Dialogs are kept.'));
      }).catch((err) => out.replaceChildren(errorBox(err)));
    },
  }, field('Retention (days)', days, '0 keeps dialogs.'), h('button', { type: 'submit' }, 'Save retention'));
}

/** dialogView renders #/t/<tenant>/dialogs/<id>: messages, tool calls, versions. */
export async function dialogView({ tenant, params: [id] }) {
  const d = await api('GET', tenantPath(tenant, 'dialogs', id));
  // Agents called as tools ran in dialogs of their own, linked to the call.
  const { dialogs: subRuns } = await api('GET', tenantPath(tenant, 'dialogs') + '?parent=' + encodeURIComponent(d.id));
  const subRunOf = Object.fromEntries(subRuns.map((s) => [s.parent_call_id, s.id]));
  const link = (dialog) => h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs/${encodeURIComponent(dialog)}` }, h('code', null, dialog));
  const callsOf = {};
  for (const c of d.tool_calls || []) (callsOf[c.message_id] = callsOf[c.message_id] || []).push(c);
  const ratingOf = Object.fromEntries((d.feedback || []).map((f) => [f.message_id, f]));
  const ups = (d.feedback || []).filter((f) => f.rating === 'up').length;
  const downs = (d.feedback || []).length - ups;
  const context = Object.entries(d.context || {});

  return h('div', null,
    h('p', null, h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs` }, '← All dialogs')),
    h('div', { class: 'title-row' }, h('h1', null, 'Dialog ', h('code', null, d.id)), h('span', { class: 'badge ' + d.status }, d.status),
      h('button', {
        type: 'button', class: 'small danger',
        onclick: (e) => {
          if (!confirm('Delete this dialog and all its messages? This cannot be undone.')) return;
          busy(e.target, async () => {
            await api('DELETE', tenantPath(tenant, 'dialogs', d.id));
            location.hash = `#/t/${encodeURIComponent(tenant)}/dialogs`;
          }).catch((err) => alert(err.message));
        },
      }, 'Delete')),
    d.status === 'closed' ? h('p', { class: 'muted' }, 'Closed: ', d.closed_reason || '—') : closeForm(tenant, d),
    h('dl', { class: 'facts' },
      h('dt', null, 'Outcome'), h('dd', { 'data-outcome': d.outcome || '' }, d.outcome
        ? [h('span', { class: 'badge ' + d.outcome }, d.outcome.replace('_', ' ')), ' ', h('span', { class: 'muted' }, d.outcome_reason || '')]
        : 'open'),
      h('dt', null, 'Rating'), h('dd', null, d.rating ? `${d.rating} of 5` : 'none'),
      h('dt', null, 'Labels'), h('dd', null, labelsForm(tenant, d)),
      h('dt', null, 'Version'), h('dd', null, 'v' + d.version, d.preview ? ' (preview)' : ''),
      h('dt', null, 'User'), h('dd', null, d.user_id || '—'),
      h('dt', null, 'Channel'), h('dd', null, d.channel),
      h('dt', null, 'Started'), h('dd', null, when(d.created_at)),
      h('dt', null, 'Feedback'), h('dd', null, ups + downs ? `${ups} up, ${downs} down` : 'none'),
      d.parent_dialog_id ? [h('dt', null, 'Agent call of'), h('dd', null, link(d.parent_dialog_id))] : null,
      context.length ? [h('dt', null, 'Context'), h('dd', null, context.map(([k, v]) => h('code', null, `${k}=${v}`)))] : null),
    card('Make this a test', toTestForm(tenant, d)),
    card('Conversation', h('ol', { class: 'transcript' },
      (d.messages || []).map((m) => message(m, callsOf[m.id] || [], ratingOf[m.id], (c) => subRunOf[c.id] && link(subRunOf[c.id]))))),
    d.user_id && !d.user_id.startsWith('anon_') ? await memoryCard(tenant, d.user_id) : null);
}

// labelsForm edits the tenant's labels on the dialog (PUT .../labels),
// comma separated.
function labelsForm(tenant, d) {
  const input = h('input', { type: 'text', name: 'labels', value: (d.labels || []).join(', '), placeholder: 'billing, vip', 'aria-label': 'Labels' });
  const out = h('span', { role: 'status' });
  return h('form', {
    class: 'row-form',
    onsubmit: async (e) => {
      e.preventDefault();
      try {
        const labels = input.value.split(',').map((l) => l.trim()).filter(Boolean);
        const saved = await api('PUT', tenantPath(tenant, 'dialogs', d.id, 'labels'), { labels });
        input.value = saved.labels.join(', ');
        mount(out, 'Saved.');
      } catch (err) {
        mount(out, errorBox(err));
      }
    },
  }, input, h('button', { type: 'submit', class: 'small' }, 'Save labels'), out);
}

// toTestForm makes a conversation test from the dialog (POST .../to-test)
// with the expectations the reviewer ticks, shown as the test file's JSON
// and optionally saved with the bot as a new version.
function toTestForm(tenant, d) {
  const name = h('input', { type: 'text', name: 'name', placeholder: 'dialog ' + d.id, 'aria-label': 'Test name' });
  const tools = h('input', { type: 'checkbox', name: 'tools_called', checked: true });
  const noHandoff = h('input', { type: 'checkbox', name: 'no_handoff' });
  const mention = h('input', { type: 'text', name: 'reply_contains', placeholder: 'words the last reply must contain, comma separated', 'aria-label': 'The reply must mention' });
  const retrieved = h('input', { type: 'text', name: 'retrieved', placeholder: 'knowledge source titles the search must find, comma separated', 'aria-label': 'The search must find' });
  const save = h('input', { type: 'checkbox', name: 'save' });
  const out = h('div', { class: 'to-test', 'aria-live': 'polite' });
  const check = (box, text) => h('label', { class: 'check' }, box, ' ', text);
  return h('form', {
    onsubmit: async (e) => {
      e.preventDefault();
      try {
        const body = {
          name: name.value.trim(), tools_called: tools.checked, no_handoff: noHandoff.checked, save: save.checked,
          reply_contains: mention.value.split(',').map((x) => x.trim()).filter(Boolean),
          retrieved: retrieved.value.split(',').map((x) => x.trim()).filter(Boolean),
        };
        const got = await api('POST', tenantPath(tenant, 'dialogs', d.id, 'to-test'), body);
        mount(out, got.version ? notice(`Saved with ${got.bot} as version ${got.version}: publish it to make the test count.`) : null,
          h('pre', { class: 'code', 'data-test': got.bot }, JSON.stringify(got.test, null, 2)));
      } catch (err) {
        mount(out, errorBox(err));
      }
    },
  },
  h('div', { class: 'row-form' }, field('Name', name), field('The reply must mention', mention), field('The search must find', retrieved)),
  h('div', { class: 'row-form' }, check(tools, 'These tools must be called'), check(noHandoff, 'No handoff'),
    check(save, 'Save with the bot (a new version)')),
  h('button', { type: 'submit', class: 'small' }, 'Make this a test'), out);
}

// closeForm closes the dialog with a reason (POST .../close): it takes no
// more messages, and a reply still running in it stops.
function closeForm(tenant, d) {
  const reason = h('input', { type: 'text', name: 'reason', required: true, maxlength: 500, placeholder: 'Why is it over?', 'aria-label': 'Reason' });
  const out = h('div');
  const form = h('form', {
    class: 'row-form',
    onsubmit: async (e) => {
      e.preventDefault();
      try {
        const closed = await api('POST', tenantPath(tenant, 'dialogs', d.id, 'close'), { reason: reason.value });
        form.replaceWith(h('p', { class: 'muted' }, 'Closed: ', closed.closed_reason));
      } catch (err) {
        mount(out, errorBox(err));
      }
    },
  }, field('Close this dialog', reason), h('button', { type: 'submit', class: 'small' }, 'Close dialog'), out);
  return form;
}

/**
 * message is one entry of the transcript (the inbox's too), with its tool
 * calls (a failed one says so) and the end user's rating of it; subRun(call)
 * is a link to the dialog an agent call ran in, if it was one.
 * @param {Record<string, any>} m
 * @param {Array<Record<string, any>>} calls
 * @param {Record<string, any>} [rating]
 * @param {(call: Record<string, any>) => any} [subRun]
 */
export function message(m, calls, rating, subRun) {
  if (eventKinds.includes(m.kind)) return eventLine(m);
  const marks = [
    m.version ? h('span', { class: 'badge' }, 'v' + m.version) : null,
    m.status && m.status !== 'complete' ? h('span', { class: 'badge ' + m.status }, m.status) : null,
    m.model ? h('span', { class: 'muted' }, m.model) : null,
    rating ? h('span', { class: 'badge ' + rating.rating, 'data-feedback': rating.rating },
      rating.rating === 'up' ? '👍 thumbs up' : '👎 thumbs down') : null,
  ];
  return h('li', { class: 'turn ' + (m.role || m.kind) },
    h('div', { class: 'turn-head' }, h('strong', null, m.role || m.kind), m.author ? h('span', null, m.author) : null, marks,
      h('span', { class: 'muted' }, when(m.created_at))),
    m.text && m.role === 'assistant' ? h('div', { class: 'turn-text md' }, render(m.text)) : null,
    m.text && m.role !== 'assistant' ? h('p', { class: 'turn-text' }, m.text) : null,
    m.status === 'interrupted' ? h('p', { class: 'turn-error', role: 'note' },
      'This reply stopped before it finished: the model call failed or its server stopped.') : null,
    imagesOf(m).map((img) => h('p', { class: 'muted turn-image' }, `[image: ${img.media_type}, ${img.size} bytes]`)),
    rating && rating.comment ? h('p', { class: 'feedback-note' }, h('strong', null, 'End user’s comment: '), rating.comment) : null,
    calls.map((c) => h('details', { class: 'tool ' + (c.is_error ? 'failed' : 'ok') },
      h('summary', null, h('span', { class: 'tool-name' }, c.name), c.is_error ? h('span', { class: 'badge failed' }, 'failed') : null,
        ` · ${c.status} · ${c.duration_ms} ms`),
      h('h3', null, 'Arguments'), h('pre', null, json(c.arguments)),
      subRun && subRun(c) ? h('p', null, 'Agent sub-run: ', subRun(c)) : null,
      h('h3', null, c.is_error ? 'Error' : 'Result'), h('pre', null, json(c.result)))));
}

/**
 * eventLine is a system event of the dialog (docs/events.md) as a short
 * centered line; a run that failed ("run failed: ..." or "run stopped:
 * error") is an error line with its message.
 * @param {Record<string, any>} m
 */
function eventLine(m) {
  const failed = /^run (failed|stopped: error)/.test(m.text || '');
  return h('li', { class: 'event' + (failed ? ' failed' : ''), role: failed ? 'note' : null, 'data-kind': m.kind },
    h('span', null, m.text), ' · ', h('time', { datetime: m.created_at }, when(m.created_at)));
}

// imagesOf lists the images a user sent with m: their type and size (the
// API never returns their bytes).
function imagesOf(m) {
  return (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === 'image' && b.image).map((b) => b.image);
}
