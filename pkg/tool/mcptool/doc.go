// Package mcptool exposes the tools of MCP servers (streamable HTTP, SSE and
// stdio) through the official MCP Go SDK, as <server>__<tool>.
package mcptool
