// Package toolbox assembles the tool set of one dialog from a compiled bot:
// the config's HTTP endpoint tools (bound to the dialog's variables and
// secrets), its client-executed tools, the native tools it enables, and the
// tools of its MCP servers. The server and `parley chat` both build dialogs
// through Build, so a bot behaves the same in the terminal and in production.
//
// Nothing here connects anywhere until Build is called for a dialog:
// validating or saving a config never reaches an MCP server or an endpoint.
package toolbox
