// Drives Parley's OpenAI face with the official `openai` package, as any
// OpenAI client would. Go's TestTheOfficialOpenAIClient runs it with
// PARLEY_URL, PARLEY_KEY and PARLEY_OTHER_KEY (another tenant's) and
// checks what it prints (one JSON object).
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.PARLEY_URL + '/v1', apiKey: process.env.PARLEY_KEY, maxRetries: 0 });
const out = {};

out.models = (await client.models.list()).data.map((m) => m.id);
out.model = (await client.models.retrieve('helper')).id;

// Not streamed, through withResponse to read the dialog header.
const { data: first, response } = await client.chat.completions
  .create({ model: 'helper', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi, I am Ada.' }], user: 'ada' })
  .withResponse();
out.first = { content: first.choices[0].message.content, finish: first.choices[0].finish_reason, usage: first.usage, object: first.object };
out.dialog = response.headers.get('x-parley-dialog');

// The stored dialog continued by its header, sending only the new message.
const again = await client.chat.completions.create(
  { model: 'helper', messages: [{ role: 'user', content: 'Who am I?' }] },
  { headers: { 'X-Parley-Dialog': out.dialog } },
);
out.again = again.choices[0].message.content;

// Streamed, with the usage chunk.
const stream = await client.chat.completions.create({
  model: 'helper', stream: true, stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'Stream, please.' }],
});
out.stream = { content: '', finish: null, usage: null, chunks: 0 };
for await (const chunk of stream) {
  out.stream.chunks++;
  if (chunk.usage) out.stream.usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  out.stream.content += choice.delta.content ?? '';
  if (choice.finish_reason) out.stream.finish = choice.finish_reason;
}

// The client's own tool: called back as tool_calls, answered with a tool message.
const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
const messages = [{ role: 'user', content: 'Weather in Oslo?' }];
const asked = await client.chat.completions.create({ model: 'helper', messages, tools });
const call = asked.choices[0].message.tool_calls?.[0];
out.toolCall = { finish: asked.choices[0].finish_reason, name: call?.function.name, arguments: call?.function.arguments };
messages.push(asked.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '-3 and snowing' });
const answered = await client.chat.completions.create({ model: 'helper', messages, tools });
out.toolAnswer = answered.choices[0].message.content;

// An error: a model (bot) that does not exist.
try {
  await client.chat.completions.create({ model: 'nobody', messages: [{ role: 'user', content: 'hi' }] });
  out.error = 'no error';
} catch (e) {
  out.error = { class: e.constructor.name, status: e.status, type: e.type, code: e.code, param: e.param, message: e.message };
}

// Another tenant's bot: its key lists it, this key cannot reach it.
const theirs = new OpenAI({ baseURL: process.env.PARLEY_URL + '/v1', apiKey: process.env.PARLEY_OTHER_KEY, maxRetries: 0 });
out.theirs = { models: (await theirs.models.list()).data.map((m) => m.id) };
try {
  await client.chat.completions.create({ model: 'theirs', messages: [{ role: 'user', content: 'hi' }] });
  out.theirs.error = 'no error';
} catch (e) {
  out.theirs.error = { class: e.constructor.name, code: e.code };
}

console.log(JSON.stringify(out));
