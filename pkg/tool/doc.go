// Package tool defines what every tool is to the agent loop: a Definition the
// model sees, a Call that returns a Result, and small optional interfaces for
// extra behaviour (ConfirmationRequired, ClientExecuted, Ephemeral).
//
// A Set holds the tools of one dialog. Set.Call validates arguments against
// the tool's schema (compiled once per tool) before calling it, and turns every
// failure into an is_error Result the model can read.
//
// Implementations live in subpackages named after their technology:
// httptool (HTTP endpoints from a config), mcptool (MCP servers) and builtin
// (native Go tools).
package tool
