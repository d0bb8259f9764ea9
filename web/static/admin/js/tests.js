// A bot's conversation tests (docs/testing.md): the test file saved with
// each version, running a version's tests, and the publish gate.

import { api, tenantPath } from './api.js';
import { h, mount, errorBox, notice, busy } from './dom.js';

/** testsPanel returns {el, setVersions, setTests, text, testsJSON} for bot slug of tenant. */
export function testsPanel(tenant, slug, bot, onChange) {
  const botPath = (...p) => tenantPath(tenant, 'bots', slug, ...p);
  const text = h('textarea', { class: 'code tests-file', name: 'tests', rows: 10, spellcheck: false,
    'aria-label': 'Conversation tests saved with the next version', placeholder: '{"tests": [...]}  (saved with the next version)' });
  const version = h('select', { name: 'tests-version', 'aria-label': 'Version to test' });
  const out = h('div', { class: 'test-results', 'aria-live': 'polite' });
  const gate = h('input', {
    type: 'checkbox', name: 'require_passing_tests', checked: !!bot.require_passing_tests,
    onchange: async (e) => {
      try {
        const b = await api('PATCH', botPath(), { require_passing_tests: e.target.checked });
        mount(out, notice(b.require_passing_tests ? 'Publishing now requires passing tests.' : 'Publishing no longer requires passing tests.'));
        onChange?.(b);
      } catch (err) {
        e.target.checked = !e.target.checked;
        mount(out, errorBox(err));
      }
    },
  });

  function render(run) {
    const rows = run.results.map((r) => h('li', { class: r.passed ? 'test ok' : 'test fail' },
      h('strong', null, r.passed ? 'ok ' : 'FAIL '), r.name,
      r.failures ? h('ul', null, r.failures.map((f) => h('li', null, f))) : null));
    const failed = run.results.filter((r) => !r.passed).length;
    mount(out,
      h('p', { class: failed ? 'summary fail' : 'summary ok' },
        `v${run.version}: ${run.results.length - failed} passed, ${failed} failed`),
      h('ul', { class: 'tests' }, rows));
  }

  const runForm = h('form', {
    class: 'toolbar',
    onsubmit: (e) => {
      e.preventDefault();
      busy(e.submitter, async () => render(await api('POST', botPath('tests'), { version: Number(version.value) })))
        .catch((err) => mount(out, errorBox(err)));
    },
  }, h('label', { class: 'inline' }, 'Version ', version), h('button', { type: 'submit', class: 'small' }, 'Run tests'));

  return {
    el: h('div', null,
      runForm,
      h('label', { class: 'inline' }, gate, ' Require passing tests to publish'),
      out,
      h('details', { class: 'prompt-box' }, h('summary', null, 'Test file saved with the next version'), text)),
    setVersions(versions) {
      const keep = version.value;
      mount(version, [...versions].reverse().map((v) => h('option', { value: String(v.number) }, 'v' + v.number)));
      if (keep) version.value = keep;
    },
    setTests(tests) {
      text.value = tests ? JSON.stringify(tests, null, 2) : '';
    },
    /** text is the test file as typed. */
    text: () => text.value,
    /** setText puts back a test file as typed (a restored draft). */
    setText(t) {
      text.value = t;
    },
    /** testsJSON is the test file to save, undefined when empty; throws on bad JSON. */
    testsJSON() {
      if (!text.value.trim()) return undefined;
      try {
        return JSON.parse(text.value);
      } catch (err) {
        throw new Error('The tests are not valid JSON: ' + err.message);
      }
    },
  };
}
