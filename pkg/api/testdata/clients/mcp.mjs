// Drives a bot's MCP face with @modelcontextprotocol/sdk's client over
// streamable HTTP. Go's TestTheOfficialMCPClient runs it with PARLEY_MCP_URL,
// PARLEY_KEY and PARLEY_OTHER_KEY and checks what it prints (one JSON object).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.PARLEY_MCP_URL);
const connect = async (key) => {
  const client = new Client({ name: 'parley-test', version: '1.0.0' });
  const headers = key ? { Authorization: 'Bearer ' + key } : {};
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
};
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
const out = {};

const client = await connect(process.env.PARLEY_KEY);
out.server = client.getServerVersion();
out.instructions = client.getInstructions();
const { tools } = await client.listTools();
out.tools = tools.map((t) => ({ name: t.name, required: t.inputSchema.required ?? [] }));
const first = await client.callTool({ name: 'ask', arguments: { message: 'I am Ada.' } });
out.first = { text: text(first), isError: first.isError ?? false, dialog: first._meta?.['parley/dialog_id'] };
const second = await client.callTool({ name: 'ask', arguments: { message: 'Who am I?' } });
out.second = { text: text(second), isError: second.isError ?? false, dialog: second._meta?.['parley/dialog_id'] };
await client.close();

// Another tenant's key, and no key at all, never get a session.
for (const [name, key] of [['otherTenant', process.env.PARLEY_OTHER_KEY], ['noKey', '']]) {
  try {
    const c = await connect(key);
    out[name] = 'connected';
    await c.close();
  } catch (e) {
    out[name] = `refused ${e.code}: ${e.message}`; // code: the HTTP status
  }
}

console.log(JSON.stringify(out));
