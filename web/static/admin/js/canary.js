// A bot's canary: send a share of new dialogs to a candidate version,
// compare it with the live one, then promote or drop it.

import { api, tenantPath } from './api.js';
import { h, mount, errorBox, notice, busy } from './dom.js';

/** canaryPanel returns {el, setBot} for bot slug of tenant; onChange gets the updated bot. */
export function canaryPanel(tenant, slug, onChange) {
  const path = (...p) => tenantPath(tenant, 'bots', slug, 'canary', ...p);
  const version = h('select', { name: 'canary-version', 'aria-label': 'Candidate version' });
  const percent = h('input', { type: 'number', name: 'canary-percent', min: 1, max: 100, value: '10', 'aria-label': 'Share of new dialogs in percent' });
  const status = h('div', { 'aria-live': 'polite' });
  const out = h('div', { 'aria-live': 'polite' });
  let bot;

  const act = (fn) => (e) => busy(e.target, async () => {
    bot = await fn();
    onChange?.(bot);
  }).catch((err) => mount(out, errorBox(err)));

  async function draw() {
    if (!bot.canary_version) {
      mount(status, h('p', { class: 'muted' }, 'No canary: every new dialog runs the live version.'));
      return;
    }
    const c = await api('GET', path());
    const row = (label, u) => h('tr', null, h('th', { scope: 'row' }, `${label} v${u.version}`),
      h('td', null, String(u.dialogs)), h('td', null, String(u.input_tokens + u.output_tokens)));
    mount(status,
      h('p', null, `v${c.version} takes ${c.percent}% of new dialogs.`),
      h('table', { class: 'canary-usage' },
        h('thead', null, h('tr', null, ['', 'Dialogs', 'Tokens'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, row('live', c.live), row('canary', c.canary))),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'small', onclick: act(async () => {
          const b = await api('POST', path('promote'));
          mount(out, notice(`Version ${b.published_version} is live.`));
          return b;
        }) }, 'Promote'),
        h('button', { type: 'button', class: 'small ghost', onclick: act(async () => {
          const b = await api('DELETE', path());
          mount(out, notice('Canary dropped.'));
          return b;
        }) }, 'Drop')));
  }

  const form = h('form', {
    class: 'toolbar',
    onsubmit: (e) => {
      e.preventDefault();
      act(async () => {
        const b = await api('PUT', path(), { version: Number(version.value), percent: Number(percent.value) });
        mount(out, notice(`v${b.canary_version} now takes ${b.canary_percent}% of new dialogs.`));
        return b;
      })({ target: e.submitter });
    },
  }, h('label', { class: 'inline' }, 'Version ', version), h('label', { class: 'inline' }, percent, ' %'),
  h('button', { type: 'submit', class: 'small' }, 'Start canary'));

  return {
    el: h('div', null, status, form, out),
    setBot(b, versions) {
      bot = b;
      mount(version, [...versions].reverse().filter((v) => v.number !== b.published_version)
        .map((v) => h('option', { value: String(v.number) }, 'v' + v.number)));
      draw().catch((err) => mount(status, errorBox(err)));
    },
  };
}
