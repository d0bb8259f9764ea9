// The form's guardrails: personal data masking and what the bot refuses
// to discuss (docs/guardrails.md). Tenant patterns are edited in the JSON
// view: a regular expression is easier to get right there.

import { h } from '../dom.js';
import { text, number, select, list } from './fields.js';

/** @param {import('./fields.js').FormContext} f */
export function guardrailsSection(f) {
  const g = (/** @type {string[]} */ ...k) => ['guardrails', ...k];
  return [
    h('h3', null, 'Personal data'),
    list(f, g('pii', 'redact'), 'Kinds to mask', { placeholder: 'email\nphone\ncard\niban' }),
    list(f, g('pii', 'in'), 'Masked in', { placeholder: 'transcript\nwebhooks\nlogs\nmodel' }),
    h('h3', null, 'Screening'),
    list(f, g('blocked_topics'), 'Blocked topics', { rows: 3 }),
    number(f, g('max_message_chars'), 'Longest user message (characters)', { step: '1' }),
    text(f, g('moderation', 'provider'), 'Moderation provider', { placeholder: 'the server default' }),
    text(f, g('moderation', 'model'), 'Moderation model', { placeholder: 'omni-moderation-latest' }),
    select(f, g('action'), 'When a rule fires', [['', 'refuse (default)'], ['handoff', 'hand off to a person'], ['end', 'end the dialog']]),
    text(f, g('reply'), 'Reply', { placeholder: "Sorry, I can't help with that." }),
    select(f, g('tool_injection'), 'Tool output that reads like instructions', [['', 'flag (default)'], ['block', 'block'], ['off', 'off']]),
  ];
}
