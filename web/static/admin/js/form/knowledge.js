// The form's knowledge: the tenant's knowledge bases the bot answers from,
// citing them (docs/knowledge.md).

import { text, number, select, list } from './fields.js';

/** @param {import('./fields.js').FormContext} f */
export function knowledgeSection(f) {
  const k = (/** @type {string} */ key) => ['knowledge', key];
  return [
    list(f, k('bases'), 'Knowledge bases (slugs)'),
    select(f, k('mode'), 'Mode', [['', 'tool (default): the model searches'], ['tool', 'tool'], ['auto', 'auto: search before every answer']]),
    number(f, k('top_k'), 'Passages per search', { step: '1', placeholder: '5' }),
    number(f, k('min_score'), 'Minimum score', { step: '0.05', placeholder: '0' }),
    text(f, k('tags_from'), 'Tags from the user token claim', { placeholder: 'every source for everyone' }),
  ];
}
