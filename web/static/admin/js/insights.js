// Insights: how the tenant's bots do (docs/insights.md). Outcome rates and
// satisfaction over a period with a series chart, the live version
// compared with the canary, and the questions the bot could not answer,
// each with a way to add an answer to a knowledge base and links to its
// dialogs.

import { api, tenantPath, download } from './api.js';
import { h, mount, card, field, errorBox, notice, busy } from './dom.js';
import { lineChart, legend } from './charts.js';

const pct = (/** @type {number|null} */ n) => (n === null || n === undefined ? '—' : Math.round(n * 1000) / 10 + '%');
const usd = (/** @type {number|null} */ n) => (n === null || n === undefined ? '—' : '$' + (n < 1 ? n.toFixed(4) : n.toFixed(2)));
const ms = (/** @type {number|null} */ n) => (n === null || n === undefined ? '—' : n < 1000 ? Math.round(n) + ' ms' : (n / 1000).toFixed(1) + ' s');
/** An operator's wait: seconds under two minutes, then minutes. */
const wait = (/** @type {number|null} */ n) => (n === null || n === undefined ? '—' : n < 120000 ? Math.round(n / 1000) + ' s' : Math.round(n / 60000) + ' min');

/** insightsView renders #/t/<tenant>/insights. */
export async function insightsView({ tenant }) {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 29 * 864e5).toISOString().slice(0, 10);
  const { bots } = await api('GET', tenantPath(tenant, 'bots'));
  const bot = h('select', { name: 'bot' }, h('option', { value: '' }, 'All bots'), bots.map((b) => h('option', { value: b.slug }, b.name)));
  const from = h('input', { type: 'date', name: 'from', value: monthAgo });
  const to = h('input', { type: 'date', name: 'to', value: today });
  const bucket = h('select', { name: 'bucket' }, h('option', { value: 'day' }, 'By day'), h('option', { value: 'hour' }, 'By hour'));
  const overview = h('div', { class: 'insights', 'aria-live': 'polite' });
  const versions = h('div', { class: 'versions' });
  const unanswered = h('div', { class: 'unanswered' });
  const query = () => {
    const q = new URLSearchParams({ from: from.value, to: to.value });
    if (bot.value) q.set('bot', bot.value);
    return q;
  };

  const load = async () => {
    const q = query();
    q.set('bucket', bucket.value);
    if (bot.value) q.set('compare', 'versions');
    const [a, u, kbs] = await Promise.all([
      api('GET', tenantPath(tenant, 'analytics') + '?' + q),
      api('GET', tenantPath(tenant, 'analytics', 'unanswered') + '?' + query()),
      api('GET', tenantPath(tenant, 'knowledge-bases')).catch(() => ({ knowledge_bases: [] })),
    ]);
    overview.dataset.dialogs = String(a.dialogs);
    mount(overview, rates(a), seriesCharts(a));
    mount(versions, bot.value ? compared(a.versions || []) : h('p', { class: 'muted' }, 'Pick a bot to compare its live and canary versions.'));
    mount(unanswered, questions(tenant, u.groups, kbs.knowledge_bases || []));
  };
  const fail = (/** @type {any} */ err) => mount(overview, errorBox(err));
  for (const el of [bot, from, to, bucket]) el.addEventListener('change', () => load().catch(fail));
  await load().catch(fail);

  const csv = h('button', {
    type: 'button', class: 'ghost',
    onclick: (/** @type {any} */ e) => {
      const q = query();
      q.set('bucket', bucket.value);
      q.set('format', 'csv');
      busy(e.target, () => download(tenantPath(tenant, 'analytics') + '?' + q, `${tenant}-analytics.csv`)).catch(fail);
    },
  }, 'Export CSV');
  const t = await api('GET', tenantPath(tenant));
  return h('div', null, h('h1', null, 'Insights'),
    card(null, h('div', { class: 'row-form' }, field('Bot', bot), field('From', from), field('To', to), field('Chart', bucket, 'Hours are UTC.'), csv),
      overview),
    card('Versions compared', versions),
    card('Unanswered questions', unanswered),
    card('When outcomes are computed', idleForm(tenant, t.idle_minutes)));
}

/**
 * idleForm sets how long a dialog stays quiet before its outcome is
 * computed (PATCH /tenants/{tenant} {idle_minutes}; owners).
 * @param {string} tenant
 * @param {number} current
 */
function idleForm(tenant, current) {
  const minutes = h('input', { name: 'idle_minutes', type: 'number', min: 0, max: 10080, value: current });
  const out = h('div');
  return h('form', {
    class: 'row-form',
    onsubmit: (/** @type {any} */ e) => {
      e.preventDefault();
      busy(e.submitter, async () => {
        const got = await api('PATCH', tenantPath(tenant), { idle_minutes: Number(minutes.value) });
        mount(out, notice(got.idle_minutes ? `Outcomes are computed after ${got.idle_minutes} quiet minutes, or at close.` : 'Outcomes are computed at close only.'));
      }).catch((err) => mount(out, errorBox(err)));
    },
  }, field('Idle period (minutes)', minutes, 'A dialog quiet this long gets its outcome; 0 waits for it to close.'),
  h('button', { type: 'submit' }, 'Save idle period'), out);
}

/**
 * rates is the period's headline numbers.
 * @param {Record<string, any>} a GET /analytics
 */
function rates(a) {
  const o = a.outcomes;
  return h('div', { class: 'stats' },
    stat('Dialogs', String(a.dialogs), 'dialogs'),
    stat('Resolved', `${pct(a.resolution_rate)} (${o.resolved})`, 'resolution_rate'),
    stat('Handed off', `${pct(a.handoff_rate)} (${o.handed_off})`, 'handoff_rate'),
    stat('Abandoned', `${pct(a.abandonment_rate)} (${o.abandoned})`, 'abandonment_rate'),
    stat('Failed', `${pct(a.failure_rate)} (${o.failed})`, 'failure_rate'),
    stat('CSAT', a.ratings ? `${pct(a.csat)} of ${a.ratings}` : '—', 'csat'),
    stat('First response', ms(a.first_response_ms), 'first_response_ms'),
    stat('Full reply', ms(a.reply_ms), 'reply_ms'),
    stat('Operator first response', wait(a.operator_first_response_ms), 'operator_first_response_ms'),
    stat('Time to take', takeTime(a), 'handoff_take_ms'),
    stat('Operator reply', wait(a.operator_reply_ms), 'operator_reply_ms'),
    stat('Tool failures', pct(a.tool_failure_rate), 'tool_failure_rate'),
    stat('Knowledge hits', pct(a.knowledge_hit_rate), 'knowledge_hit_rate'),
    stat('Cost per resolved', usd(a.cost_per_resolved), 'cost_per_resolved'));
}

/**
 * takeTime is how long handed-off dialogs waited for an operator to take
 * them: the mean, and the bucket bound at or under which half of them
 * were taken.
 * @param {Record<string, any>} a
 */
function takeTime(a) {
  if (a.handoff_take_ms === null || a.handoff_take_ms === undefined) return '—';
  const median = a.handoff_take_p50_ms === null ? 'half over a day' : `half within ${wait(a.handoff_take_p50_ms)}`;
  return `${wait(a.handoff_take_ms)} (${median})`;
}

/**
 * seriesCharts draws the outcomes and rates bucket by bucket.
 * @param {Record<string, any>} a
 */
function seriesCharts(a) {
  const hourly = a.bucket === 'hour';
  const labels = a.series.map((/** @type {any} */ p) => (hourly ? p.start.slice(0, 13).replace('T', ' ') + ':00' : p.start.slice(0, 10)));
  const col = (/** @type {(p: any) => number|null} */ f) => a.series.map(f);
  const num = (/** @type {number} */ n) => Number(n).toLocaleString();
  const percent = (/** @type {number} */ n) => Math.round(n) + '%';
  const outcomes = [
    { label: 'Resolved', values: col((p) => p.outcomes.resolved), color: '#127a4b' },
    { label: 'Handed off', values: col((p) => p.outcomes.handed_off), color: '#3557e0' },
    { label: 'Abandoned', values: col((p) => p.outcomes.abandoned), color: '#8a8f98' },
    { label: 'Failed', values: col((p) => p.outcomes.failed), color: '#b42318' },
  ];
  const share = (/** @type {number|null} */ v) => (v === null ? null : v * 100);
  const rateSeries = [
    { label: 'Resolution', values: col((p) => share(p.resolution_rate)), color: '#127a4b', showZero: true, summary: pct(a.resolution_rate) },
    { label: 'CSAT', values: col((p) => share(p.csat)), color: '#e07a35', showZero: true, summary: pct(a.csat) },
  ];
  return h('div', { class: 'charts', 'data-bucket': a.bucket },
    h('div', { class: 'chart-box' }, h('h3', null, 'Outcomes'), lineChart('outcomes', labels, outcomes, num), legend(outcomes)),
    h('div', { class: 'chart-box' }, h('h3', null, 'Resolution and CSAT'), lineChart('rates', labels, rateSeries, percent, 100), legend(rateSeries),
      h('p', { class: 'muted' }, 'Buckets without dialogs or ratings are gaps.')));
}

/**
 * compared is the versions table: live, canary, others.
 * @param {Array<Record<string, any>>} versions
 */
function compared(versions) {
  if (!versions.length) return h('p', { class: 'muted' }, 'No version had dialogs in this period.');
  const ci = (/** @type {any} */ i) => (i ? ` (${pct(i.low)}–${pct(i.high)})` : '');
  return h('div', { class: 'table-wrap' }, h('table', null,
    h('thead', null, h('tr', null, ['Version', 'Dialogs', 'Resolution', 'Handoff', 'CSAT', 'Cost per resolved', '']
      .map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', null, versions.map((v) => h('tr', { 'data-version': String(v.version), 'data-role': v.role || '' },
      h('td', null, 'v' + v.version, v.role ? h('span', { class: 'badge' }, v.role) : null),
      h('td', { class: 'n' }, String(v.dialogs)),
      h('td', null, pct(v.resolution_rate) + ci(v.resolution_ci)),
      h('td', null, pct(v.handoff_rate) + ci(v.handoff_ci)),
      h('td', null, pct(v.csat) + ci(v.csat_ci)),
      h('td', null, usd(v.cost_per_resolved)),
      h('td', { class: 'muted' }, v.note || '95% Wilson intervals')))),
  ));
}

/**
 * questions lists the unanswered groups, each with its dialogs and a form
 * that adds a question and answer to a knowledge base.
 * @param {string} tenant
 * @param {Array<Record<string, any>>} groups
 * @param {Array<Record<string, any>>} kbs
 */
function questions(tenant, groups, kbs) {
  if (!groups.length) return h('p', { class: 'empty' }, 'No unanswered questions in this period.');
  return h('ol', { class: 'questions' }, groups.map((g) => {
    const dialogs = h('ul', { class: 'links', hidden: true }, g.dialogs.map((/** @type {string} */ id) => h('li', null,
      h('a', { href: `#/t/${encodeURIComponent(tenant)}/dialogs/${encodeURIComponent(id)}` }, h('code', null, id)))));
    const reasons = Object.entries(g.reasons || {}).map(([k, n]) => `${k.replace('_', ' ')} ${n}`).join(', ');
    return h('li', { class: 'question', 'data-count': String(g.count) },
      h('p', null, h('strong', null, g.question), ' ', h('span', { class: 'badge' }, `asked ${g.count}×`), ' ', h('span', { class: 'muted' }, reasons)),
      g.examples.length > 1 ? h('p', { class: 'muted' }, 'Also: ', g.examples.filter((/** @type {string} */ x) => x !== g.question).join(' · ')) : null,
      h('div', { class: 'row-form' },
        h('button', {
          type: 'button', class: 'ghost small',
          onclick: () => { dialogs.hidden = !dialogs.hidden; },
        }, 'Open dialogs'),
        answerForm(tenant, g.question, kbs)),
      dialogs);
  }));
}

/**
 * answerForm adds the question with an answer to a knowledge base as a
 * Q&A source (POST /knowledge-bases/{kb}/sources {qa}).
 * @param {string} tenant
 * @param {string} question
 * @param {Array<Record<string, any>>} kbs
 */
function answerForm(tenant, question, kbs) {
  if (!kbs.length) return h('span', { class: 'muted' }, 'Create a knowledge base to add answers.');
  const kb = h('select', { name: 'kb', 'aria-label': 'Knowledge base' }, kbs.map((k) => h('option', { value: k.slug || k.id }, k.name)));
  const answer = h('textarea', { name: 'answer', rows: 2, required: true, maxlength: 4000, placeholder: 'The answer the bot should give', 'aria-label': 'Answer' });
  const out = h('div');
  const details = h('details', { class: 'add-answer' }, h('summary', null, 'Add an answer to a knowledge base'));
  const form = h('form', {
    onsubmit: async (/** @type {Event} */ e) => {
      e.preventDefault();
      try {
        await api('POST', tenantPath(tenant, 'knowledge-bases', kb.value, 'sources'), { qa: [{ question, answer: answer.value.trim() }] });
        mount(out, notice('Added: the answer is indexed into the knowledge base.'));
        answer.value = '';
      } catch (err) {
        mount(out, errorBox(err));
      }
    },
  }, field('Knowledge base', kb), field('Answer', answer), h('button', { type: 'submit', class: 'small' }, 'Add answer'), out);
  details.append(form);
  return details;
}

/**
 * @param {string} label
 * @param {string} value
 * @param {string} name
 */
function stat(label, value, name) {
  return h('div', { class: 'stat', 'data-stat': name }, h('span', null, label), h('strong', null, value));
}
