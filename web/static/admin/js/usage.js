// Usage: charts of the tenant's (or one bot's) activity day by day or,
// for the last day or two, hour by hour (UTC), and
// tokens, cost, tool calls and turns between two days, grouped by day,
// bot, key or provider.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table } from './dom.js';
import { lineChart, legend } from './charts.js';

const groups = [['day', 'Day'], ['bot', 'Bot'], ['key', 'API key'], ['provider', 'Provider']];
// resolutions are the charts' buckets: days From..To, or the last hours.
const resolutions = [['day', 'Daily, From to To'], ['24', 'Hourly, last 24 hours'], ['48', 'Hourly, last 48 hours']];
const num = (n) => Number(n).toLocaleString();

/** usageView renders #/t/<tenant>/usage. */
export async function usageView({ tenant }) {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 864e5).toISOString().slice(0, 10);
  const from = h('input', { type: 'date', name: 'from', value: monthAgo });
  const to = h('input', { type: 'date', name: 'to', value: today });
  const by = h('select', { name: 'group_by' }, groups.map(([v, t]) => h('option', { value: v }, t)));
  const out = h('div');
  const [{ bots }, keys] = await Promise.all([api('GET', tenantPath(tenant, 'bots')),
    api('GET', tenantPath(tenant, 'api-keys')).catch(() => ({ api_keys: [] }))]);
  const names = Object.fromEntries([...bots.map((b) => [b.id, b.name]), ...keys.api_keys.map((k) => [k.id, k.name])]);

  const load = async () => {
    const q = new URLSearchParams({ from: from.value, to: to.value, group_by: by.value });
    const r = await api('GET', tenantPath(tenant, 'usage') + '?' + q);
    const total = r.usage.reduce((t, u) => ({
      in: t.in + u.input_tokens, out: t.out + u.output_tokens, cost: t.cost + u.cost_usd, tools: t.tools + u.tool_calls, turns: t.turns + u.turns,
      embedded: t.embedded + (u.embedding_tokens || 0),
    }), { in: 0, out: 0, cost: 0, tools: 0, turns: 0, embedded: 0 });
    const none = by.value === 'provider' ? '(not recorded)' : '(no key)';
    const label = (g) => (by.value === 'day' || by.value === 'provider' ? g || none : names[g] || g || none);
    mount(out,
      h('div', { class: 'stats' },
        stat('Input tokens', num(total.in)), stat('Output tokens', num(total.out)),
        stat('Cost', '$' + total.cost.toFixed(4)), stat('Tool calls', num(total.tools)), stat('Turns', num(total.turns)),
        // Knowledge searches embed their queries: billed apart by providers.
        stat('Embedding tokens', num(total.embedded))),
      table(['Group', 'Input tokens', 'Output tokens', 'Cost (USD)', 'Tool calls', 'Turns', 'Embedding tokens'], r.usage.map((u) => h('tr', null,
        h('td', null, label(u.group)), h('td', { class: 'n' }, num(u.input_tokens)), h('td', { class: 'n' }, num(u.output_tokens)),
        h('td', { class: 'n' }, u.cost_usd.toFixed(4)), h('td', { class: 'n' }, num(u.tool_calls)), h('td', { class: 'n' }, num(u.turns)),
        h('td', { class: 'n' }, num(u.embedding_tokens || 0)))),
      'No usage in this period.'));
  };
  const bot = h('select', { name: 'bot' }, h('option', { value: '' }, 'All bots'), bots.map((b) => h('option', { value: b.slug }, b.name)));
  const resolution = h('select', { name: 'resolution' }, resolutions.map(([v, t]) => h('option', { value: v }, t)));
  const charts = h('div', { class: 'charts', 'aria-live': 'polite' });
  const loadCharts = async () => {
    const q = new URLSearchParams({ from: from.value, to: to.value });
    const hours = Number(resolution.value);
    if (hours) {
      // The last hours up to the current one, in UTC like the buckets.
      const hour = (ms) => new Date(ms).toISOString().slice(0, 13);
      q.set('bucket', 'hour');
      q.set('from', hour(Date.now() - (hours - 1) * 36e5));
      q.set('to', hour(Date.now()));
    }
    if (bot.value) q.set('bot', bot.value);
    const report = await api('GET', tenantPath(tenant, 'usage', 'series') + '?' + q);
    charts.dataset.bucket = report.bucket;
    mount(charts, activityCharts(report));
  };
  for (const el of [from, to, by]) el.addEventListener('change', load);
  for (const el of [from, to, bot, resolution]) el.addEventListener('change', loadCharts);
  await Promise.all([load(), loadCharts()]);
  return h('div', null, h('h1', null, 'Usage'),
    card(null, h('div', { class: 'row-form' }, field('From', from), field('To', to), field('Bot (charts)', bot),
      field('Charts', resolution, 'Hours are UTC.'), field('Group by', by)),
    charts),
    card('Totals', out));
}

/**
 * activityCharts draws GET /usage/series: one chart per subject, by day
 * or by hour.
 * @param {{bucket: string, days: Array<Record<string, any>>}} report
 * @returns {HTMLElement[]}
 */
function activityCharts(report) {
  const hourly = report.bucket === 'hour';
  const days = report.days.map((d) => (hourly ? d.hour.replace('T', ' ') + ':00' : d.day));
  const col = (k) => report.days.map((d) => d[k]);
  const rate = report.days.map((d) => (d.feedback_up + d.feedback_down ? (100 * d.feedback_up) / (d.feedback_up + d.feedback_down) : null));
  const up = col('feedback_up').reduce((a, b) => a + b, 0);
  const down = col('feedback_down').reduce((a, b) => a + b, 0);
  const usd = (n) => '$' + (n < 1 ? n.toFixed(4) : n.toFixed(2));
  const pct = (n) => Math.round(n) + '%';
  const box = (title, name, series, format, note, ceiling) => h('div', { class: 'chart-box' }, h('h3', null, title),
    lineChart(name, days, series, format, ceiling), legend(series), note ? h('p', { class: 'muted' }, note) : null);
  return [
    box('Dialogs and end users', 'dialogs', [{ label: 'Dialogs', values: col('dialogs'), color: '#3557e0' },
      { label: 'End users', values: col('end_users'), color: '#12a38a' }], num),
    box('Messages', 'messages', [{ label: 'Messages', values: col('messages'), color: '#7a4ce0' }], num),
    box('Tokens', 'tokens', [{ label: 'Input', values: col('input_tokens'), color: '#3557e0' },
      { label: 'Output', values: col('output_tokens'), color: '#e07a35' }], num),
    box('Cost', 'cost', [{ label: 'Cost (USD)', values: col('cost_usd'), color: '#127a4b' }], usd),
    box('Tool calls and errors', 'tools', [{ label: 'Tool calls', values: col('tool_calls'), color: '#5f6b7a' },
      { label: 'Tool errors', values: col('tool_errors'), color: '#b42318' }], num),
    box('Feedback', 'feedback', [{ label: 'Thumbs up', values: col('feedback_up'), color: '#127a4b' },
      { label: 'Thumbs down', values: col('feedback_down'), color: '#b42318' }], num,
    up + down ? `Positive rate ${pct((100 * up) / (up + down))} (${up} up, ${down} down)` : 'No feedback in this period.'),
    box('Positive feedback rate', 'feedback-rate', [{ label: 'Thumbs up share', values: rate, color: '#127a4b', showZero: true,
      summary: up + down ? pct((100 * up) / (up + down)) : 'none' }], pct,
      hourly ? 'Hours without feedback are gaps.' : 'Days without feedback are gaps.', 100),
  ];
}

function stat(label, value) {
  return h('div', { class: 'stat' }, h('span', null, label), h('strong', null, value));
}
