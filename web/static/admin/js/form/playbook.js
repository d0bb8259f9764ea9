// The form's action books: when a situation comes up, what the bot does
// and with which tools.

import { text, picks, repeat } from './fields.js';

/** @param {import('./fields.js').FormContext} f */
export function playbookSection(f) {
  const tools = toolNames(f.doc.get());
  return repeat(f, ['action_books'], {
    title: (v, i) => `Action ${i + 1}`,
    fresh: () => ({ condition: '', action: '' }),
    add: '+ Add an action book',
    empty: 'No action books: the bot follows its description alone.',
    item: (p) => [
      text(f, [...p, 'condition'], 'When', { rows: 2, placeholder: 'When the customer wants to schedule a demo' }),
      text(f, [...p, 'action'], 'Then', { rows: 2, placeholder: 'Collect their email, then save it with save_lead' }),
      picks(f, [...p, 'tools'], 'Tools it uses', tools, { hint: '', empty: 'This bot has no tools yet: add them under Tools.' }),
    ],
  });
}

/**
 * toolNames lists the config's own and native tool names, to suggest.
 * @param {any} config
 * @returns {string[]}
 */
function toolNames(config) {
  const own = (config?.tools || []).map((/** @type {any} */ t) => t?.name);
  const natives = (config?.native_tools || []).map((/** @type {any} */ n) => (typeof n === 'string' ? n : n?.name));
  return [...own, ...natives].filter((n) => typeof n === 'string' && n);
}
