// The form's basic settings: who the bot is and how it talks.

import { text, checkbox } from './fields.js';

/** @param {import('./fields.js').FormContext} f */
export function basicSection(f) {
  const at = (/** @type {string} */ k) => ['basic_settings', k];
  return [
    text(f, at('name'), 'Name', { placeholder: 'Acme Support' }),
    text(f, at('description'), 'Description', { rows: 2 }),
    text(f, at('background'), 'Background', { rows: 4 }),
    text(f, at('greeting'), 'Greeting', { placeholder: 'Hi! How can I help?' }),
    text(f, at('language'), 'Language', { placeholder: 'English' }),
    text(f, at('tone'), 'Tone', { placeholder: 'Friendly and professional' }),
    text(f, at('chatbot_id'), 'Chatbot id'),
    checkbox(f, at('include_date'), "Tell the model today's date", false),
    text(f, at('timezone'), 'Time zone', { placeholder: 'UTC' }),
  ];
}
