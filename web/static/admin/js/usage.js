// Usage: tokens, cost, tool calls and turns between two days, grouped by
// day, bot, key or provider.

import { api, tenantPath } from './api.js';
import { h, mount, card, field, table } from './dom.js';

const groups = [['day', 'Day'], ['bot', 'Bot'], ['key', 'API key'], ['provider', 'Provider']];
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
    }), { in: 0, out: 0, cost: 0, tools: 0, turns: 0 });
    const none = by.value === 'provider' ? '(not recorded)' : '(no key)';
    const label = (g) => (by.value === 'day' || by.value === 'provider' ? g || none : names[g] || g || none);
    mount(out,
      h('div', { class: 'stats' },
        stat('Input tokens', num(total.in)), stat('Output tokens', num(total.out)),
        stat('Cost', '$' + total.cost.toFixed(4)), stat('Tool calls', num(total.tools)), stat('Turns', num(total.turns))),
      table(['Group', 'Input tokens', 'Output tokens', 'Cost (USD)', 'Tool calls', 'Turns'], r.usage.map((u) => h('tr', null,
        h('td', null, label(u.group)), h('td', { class: 'n' }, num(u.input_tokens)), h('td', { class: 'n' }, num(u.output_tokens)),
        h('td', { class: 'n' }, u.cost_usd.toFixed(4)), h('td', { class: 'n' }, num(u.tool_calls)), h('td', { class: 'n' }, num(u.turns)))),
      'No usage in this period.'));
  };
  for (const el of [from, to, by]) el.addEventListener('change', load);
  await load();
  return h('div', null, h('h1', null, 'Usage'),
    card(null, h('div', { class: 'row-form' }, field('From', from), field('To', to), field('Group by', by)), out));
}

function stat(label, value) {
  return h('div', { class: 'stat' }, h('span', null, label), h('strong', null, value));
}
