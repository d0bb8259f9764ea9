// The form's knowledge: which of the tenant's knowledge bases the bot
// answers from, and how ("knowledge" in docs/agent-config.md).

import { h, mount } from '../dom.js';
import { api, tenantPath } from '../api.js';
import { getIn } from '../configdoc.js';
import { number, select, text, inputOf } from './fields.js';

/**
 * The tenant's bases, asked once per config being edited: the form
 * redraws as it is edited, and the list seldom changes meanwhile.
 * @type {WeakMap<object, Promise<any[]>>}
 */
const basesOf = new WeakMap();

/** @param {import('./fields.js').FormContext} f */
export function knowledgeSection(f) {
  if (!basesOf.has(f.doc)) {
    basesOf.set(f.doc, api('GET', tenantPath(f.tenant, 'knowledge-bases'))
      .then((r) => r.knowledge_bases, (err) => { basesOf.delete(f.doc); throw err; }));
  }
  const at = (/** @type {string} */ k) => ['knowledge', k];
  const chosen = () => /** @type {string[]} */ (getIn(f.doc.get(), at('bases')) || []);
  const boxes = h('div', { class: 'kb-picks' }, h('p', { class: 'muted' }, 'Loading the tenant’s knowledge bases…'));
  const toggle = (/** @type {string} */ slug) => (/** @type {Event} */ e) => {
    const rest = chosen().filter((s) => s !== slug);
    const next = inputOf(e).checked ? [...rest, slug] : rest;
    f.doc.edit(at('bases'), next.length ? next : undefined);
  };
  const box = (/** @type {string} */ slug, /** @type {string} */ what) => h('label', { class: 'field check' },
    h('span', null, h('input', { type: 'checkbox', name: 'kb:' + slug, checked: chosen().includes(slug), onchange: toggle(slug) }), ' ', h('code', null, slug)),
    h('small', null, what));
  /** @type {Promise<any[]>} */ (basesOf.get(f.doc)).then((bases) => {
    const known = new Set(bases.map((/** @type {any} */ b) => b.slug));
    mount(boxes, bases.map((/** @type {any} */ b) => box(b.slug, b.name)),
      chosen().filter((s) => !known.has(s)).map((s) => box(s, 'No such knowledge base in this tenant')),
      bases.length ? null : h('p', { class: 'empty' }, 'The tenant has no knowledge bases yet: make one on the Knowledge page.'));
  }).catch((err) => mount(boxes, h('p', { class: 'problem' }, 'The knowledge bases could not be listed: ' + err.message)));
  return [
    h('div', { class: 'field', role: 'group', 'aria-label': 'Knowledge bases', 'data-pointer': '/knowledge/bases' },
      h('span', null, 'Knowledge bases'), boxes, h('small', null, 'The bot answers from these and cites them.')),
    select(f, at('mode'), 'When to search', [['', 'default'], ['tool', 'tool: the model searches when it needs to'],
      ['auto', 'auto: search before every answer']], { hint: 'tool lets the model decide; auto always looks first.' }),
    number(f, at('top_k'), 'Results per search', { step: '1', placeholder: '5', hint: 'How many chunks the bot reads each time.' }),
    number(f, at('min_score'), 'Least score', { step: '0.01', placeholder: '0', hint: 'Chunks scoring below this are left out (0 to 1).' }),
    text(f, at('tags_from'), 'Tags from the claim', { placeholder: 'plan',
      hint: 'Optional: the signed user token’s claim whose value names the tags searched, so each user finds only their sources.' }),
  ];
}
