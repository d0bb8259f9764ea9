// Asks a Parley bot that answers from a knowledge base through the official `openai`
// package, as JSON and streamed, and prints what the client read of the replies'
// url_citation annotations (one JSON object). Go's TestTheOfficialOpenAIClientReadsCitations
// runs it with PARLEY_URL and PARLEY_KEY.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.PARLEY_URL + '/v1', apiKey: process.env.PARLEY_KEY, maxRetries: 0 });
const messages = [{ role: 'user', content: 'When do I get my money back?' }];
const out = {};

const json = await client.chat.completions.create({ model: 'helper', messages });
const msg = json.choices[0].message;
out.json = { content: msg.content, annotations: msg.annotations ?? null };

const stream = await client.chat.completions.create({ model: 'helper', messages, stream: true });
let content = '';
const annotations = [];
for await (const chunk of stream) {
  const delta = chunk.choices[0]?.delta;
  if (delta?.content) content += delta.content;
  if (delta?.annotations) annotations.push(...delta.annotations);
}
out.stream = { content, annotations };

console.log(JSON.stringify(out));
