// The retrieval test of a knowledge base: ask what a user would ask and
// see the chunks a bot would get, best first, with where each stood in
// the keyword search and the vector search, and its fused score.

import { api } from './api.js';
import { h, mount, field, busy } from './dom.js';
import { showProblems, clearProblems, at } from './problems.js';

/**
 * searchPanel draws the query form and its results. searchPath: the
 * base's search route; byMeaning(): whether the base has an embedding
 * model, so a vector search ran; sourceOf(id): the listed source of that
 * id, whose title a result shows; open(source): shows its chunks.
 * @param {string} searchPath
 * @param {() => boolean} byMeaning
 * @param {(id: string) => any} sourceOf
 * @param {(source: any) => Promise<void>} open
 */
export function searchPanel(searchPath, byMeaning, sourceOf, open) {
  const query = h('input', { name: 'query', type: 'search', required: true, maxlength: 2000, placeholder: 'How long do refunds take?' });
  const tags = h('input', { name: 'tags', placeholder: 'billing, returns' });
  const topK = h('input', { name: 'top_k', type: 'number', min: 1, max: 50, step: 1, value: '5' });
  const results = h('div', { class: 'search-results', 'aria-live': 'polite' });
  const form = h('form', {
    class: 'stack',
    onsubmit: (/** @type {SubmitEvent} */ e) => {
      e.preventDefault();
      const req = { query: query.value, top_k: Number(topK.value) || 5,
        tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean) };
      busy(/** @type {HTMLButtonElement} */ (e.submitter), async () => {
        clearProblems(form);
        const { results: found } = await api('POST', searchPath, req);
        mount(results, found.length ? h('ol', { class: 'results' }, found.map((r) => result(r, byMeaning(), sourceOf(r.source), open)))
          : h('p', { class: 'empty' }, 'Nothing found. Try other words or fewer tags; sources still being read are not searched yet.'));
      }).catch((err) => { results.replaceChildren(); showProblems(form, err); });
    },
  },
  h('p', { class: 'muted' }, 'Ask what a user would ask to see what a bot would find.'),
  h('div', { class: 'row-form' },
    grow(at('/query', field('Question', query))),
    narrow(at('/top_k', field('Results', topK))),
    h('button', { type: 'submit' }, 'Search')),
  h('div', { class: 'row-form' },
    grow(at('/tags', field('Only tags', tags, 'Optional, separated by commas: only chunks of sources with one of them.')))),
  results);
  return form;
}

const grow = (/** @type {HTMLElement} */ el) => { el.classList.add('grow'); return el; };
const narrow = (/** @type {HTMLElement} */ el) => { el.classList.add('narrow'); return el; };

// result shows one ranked chunk with its source's title; vectors:
// whether a vector search ran.
function result(r, vectors, source, open) {
  const rank = (/** @type {number} */ n) => (n ? `#${n}` : 'not found');
  const sourceTitle = source ? source.title || source.filename || source.url : r.url || r.title;
  return h('li', { class: 'result', 'data-source': r.source, 'data-chunk': r.chunk },
    h('div', { class: 'result-head' },
      h('strong', { class: 'result-source' }, sourceTitle || r.source),
      r.title && r.title !== sourceTitle ? [' · ', h('span', { class: 'result-title' }, r.title)] : null,
      r.locator ? [' · ', h('span', { class: 'locator' }, r.locator)] : null,
      ` · chunk ${r.chunk + 1}`),
    h('div', { class: 'ranks muted' },
      h('span', { class: 'score' }, `score ${r.score.toFixed(3)}`), ' · ',
      h('span', { class: 'keyword-rank' }, `keyword ${rank(r.keyword_rank)}`), ' · ',
      h('span', { class: 'vector-rank' }, vectors ? `vector ${rank(r.vector_rank)}` : 'vector: none (the base searches by words)')),
    h('p', { class: 'chunk-text' }, r.text),
    source ? h('button', { type: 'button', class: 'small ghost', onclick: () => open(source) }, 'All chunks of this source') : null);
}
