// The form's MCP servers: remote (streamable HTTP, SSE) or allowlisted
// local (stdio) servers whose tools the bot may call.

import { text, number, checkbox, select, list, pairs, repeat } from './fields.js';

/** @param {import('./fields.js').FormContext} f */
export function mcpSection(f) {
  return repeat(f, ['mcp_servers'], {
    title: (v) => v?.name ? `MCP server ${v.name}` : 'New MCP server',
    fresh: () => ({ name: '', transport: 'http', url: '' }),
    add: '+ Add an MCP server',
    empty: 'No MCP servers.',
    item: (p, v) => {
      const stdio = v?.transport === 'stdio';
      return [
        text(f, [...p, 'name'], 'Name', { placeholder: 'docs' }),
        select(f, [...p, 'transport'], 'Transport', [['http', 'streamable HTTP'], ['sse', 'SSE'], ['stdio', 'stdio (allowlisted command)']], { structural: true }),
        stdio ? text(f, [...p, 'command'], 'Command') : text(f, [...p, 'url'], 'URL', { placeholder: 'https://mcp.example.com/mcp' }),
        stdio ? list(f, [...p, 'args'], 'Arguments') : pairs(f, [...p, 'headers'], 'Headers', { keyPlaceholder: 'Authorization', valuePlaceholder: 'Bearer {{secrets.docs_token}}' }),
        stdio ? pairs(f, [...p, 'env'], 'Environment') : null,
        number(f, [...p, 'timeout'], 'Timeout (seconds)', { placeholder: '30' }),
        list(f, [...p, 'tools', 'allow'], 'Only these tools'),
        list(f, [...p, 'tools', 'deny'], 'Never these tools'),
        checkbox(f, [...p, 'enabled'], 'Enabled', true),
        checkbox(f, [...p, 'show_to_end_user'], 'Show calls to end users', false),
      ].filter((x) => x !== null);
    },
  });
}
