// The form's model and limits: which model answers and how far one user
// message may go.

import { h } from '../dom.js';
import { text, number, checkbox, select, list } from './fields.js';
import { providerPicker } from './providerpick.js';

/** @param {import('./fields.js').FormContext} f */
export function modelSection(f) {
  const llm = (/** @type {string} */ k) => ['llm', k];
  const rt = (/** @type {string} */ k) => ['runtime', k];
  return [
    h('h3', null, 'Model'),
    text(f, llm('model'), 'Model', { placeholder: 'the platform default' }),
    providerPicker(f),
    number(f, llm('temperature'), 'Temperature', { step: '0.1' }),
    number(f, llm('max_tokens'), 'Max tokens per reply', { step: '1' }),
    select(f, llm('tool_choice'), 'Tool choice', [['', 'auto (default)'], ['none', 'none'], ['required', 'required']]),
    checkbox(f, llm('strict_tools'), 'Strict tool schemas', false),
    number(f, llm('thinking_budget'), 'Thinking budget (tokens)', { step: '1' }),
    list(f, llm('fallback_models'), 'Fallback models'),
    h('h3', null, 'Limits per user message'),
    number(f, rt('max_turns'), 'Max turns', { step: '1', placeholder: '8' }),
    number(f, rt('token_budget'), 'Token budget', { step: '1', placeholder: '60000' }),
    number(f, rt('timeout_seconds'), 'Timeout (seconds)', { step: '1', placeholder: '120' }),
    checkbox(f, rt('parallel_tool_calls'), 'Run tool calls in parallel', true),
    checkbox(f, rt('require_done_tool'), 'End only on the done tool', false),
    checkbox(f, rt('termination_summary'), 'Summarise when a limit cuts a run short', false),
  ];
}
