// The form's context variables: values a dialog carries (from the
// server, the widget page or the visitor's signed token) that endpoints
// and the prompt may use.

import { text, checkbox, select, repeat } from './fields.js';

/** @param {import('./fields.js').FormContext} f */
export function contextSection(f) {
  return repeat(f, ['context_variables'], {
    title: (v) => v?.name ? `{{${v.name}}}` : 'New variable',
    fresh: () => ({ name: '' }),
    add: '+ Add a context variable',
    empty: 'No context variables.',
    item: (p) => [
      text(f, [...p, 'name'], 'Name', { placeholder: 'customer_tier' }),
      text(f, [...p, 'description'], 'Description'),
      select(f, [...p, 'source'], 'Set by', [['', 'the server (sk_ keys, admin UI)'], ['page', 'the widget page'], ['identity', "the visitor's signed token"]]),
      text(f, [...p, 'claim'], 'Token claim', { placeholder: 'the variable name' }),
      text(f, [...p, 'default'], 'Default'),
      checkbox(f, [...p, 'required'], 'Required', false),
      checkbox(f, [...p, 'expose_to_llm'], 'Show to the model', false),
    ],
  });
}
