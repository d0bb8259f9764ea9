// Comparing two versions of a bot: what changed, by JSON pointer, and the
// unified diff of the pretty-printed configs.

import { api, tenantPath } from './api.js';
import { h, mount, errorBox, busy } from './dom.js';

/** versionDiff returns {el, setVersions, show} for bot slug of tenant. */
export function versionDiff(tenant, slug) {
  const from = h('select', { name: 'diff-from', 'aria-label': 'Compare from version' });
  const to = h('select', { name: 'diff-to', 'aria-label': 'Compare to version' });
  const out = h('div', { class: 'diff', 'aria-live': 'polite' });

  async function show(n, m) {
    from.value = String(n);
    to.value = String(m);
    try {
      render(await api('GET', tenantPath(tenant, 'bots', slug, 'versions', String(n), 'diff', String(m))));
    } catch (err) {
      mount(out, errorBox(err));
    }
  }

  function render(d) {
    if (!d.changes.length) {
      mount(out, h('p', { class: 'muted' }, `No changes to the config from v${d.from} to v${d.to}.`,
        d.tests_changed ? ' The tests differ.' : ''));
      return;
    }
    const changes = d.changes.map((c) => h('li', { class: 'change ' + c.op },
      h('span', { class: 'op' }, c.op), ' ', h('code', null, c.pointer || '/')));
    const lines = d.unified.replace(/\n$/, '').split('\n').map((l) => {
      const kind = l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'same';
      return h('span', { class: 'line ' + kind }, l);
    });
    mount(out,
      h('p', { class: 'muted' }, `${d.changes.length} change(s) from v${d.from} to v${d.to}`, d.tests_changed ? '; the tests differ too.' : '.'),
      h('ul', { class: 'changes' }, changes),
      h('pre', { class: 'unified' }, lines));
  }

  const form = h('form', {
    class: 'toolbar',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, () => show(Number(from.value), Number(to.value)));
    },
  }, h('label', { class: 'inline' }, 'From ', from), h('label', { class: 'inline' }, 'to ', to),
  h('button', { type: 'submit', class: 'small' }, 'Compare'));

  return {
    el: h('div', null, form, out),
    setVersions(versions) {
      const options = () => [...versions].reverse().map((v) => h('option', { value: String(v.number) }, 'v' + v.number));
      const keep = [from.value, to.value];
      mount(from, options());
      mount(to, options());
      if (keep[0]) [from.value, to.value] = keep;
      else if (versions.length > 1) {
        from.value = String(versions[versions.length - 2].number);
        to.value = String(versions[versions.length - 1].number);
      }
    },
    show,
  };
}
