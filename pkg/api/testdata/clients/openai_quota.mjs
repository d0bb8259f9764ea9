// Drives Parley's OpenAI face past the tenant's daily token quota with the
// official `openai` package and its default retries. Go's
// TestTheOfficialOpenAIClientStopsAtTheQuota runs it with PARLEY_URL and
// PARLEY_KEY and checks what it prints (one JSON object).
import OpenAI from 'openai';

let requests = 0;
const client = new OpenAI({
  baseURL: process.env.PARLEY_URL + '/v1', apiKey: process.env.PARLEY_KEY,
  fetch: (url, init) => { requests++; return fetch(url, init); },
});
const out = {};

const first = await client.chat.completions.create({ model: 'helper', messages: [{ role: 'user', content: 'hi' }] });
out.first = first.choices[0].message.content;

// Past the quota, JSON and streamed: one request each, raised at once.
for (const stream of [false, true]) {
  const before = requests;
  let error = 'no error';
  try {
    await client.chat.completions.create({ model: 'helper', stream, messages: [{ role: 'user', content: 'again' }] });
  } catch (e) {
    error = { class: e.constructor.name, status: e.status, type: e.type, code: e.code };
  }
  out[stream ? 'streamed' : 'json'] = { error, requests: requests - before };
}

console.log(JSON.stringify(out));
