// Package bottest runs conversation tests against a compiled bot: the real
// agent loop from pkg/agent, set up by pkg/botrun as for a dialog, with
// every HTTP, MCP and client tool replaced by a fixture from the test file,
// and either a scripted model (the test file says what the model answers)
// or a real provider.
//
// Load a suite with Parse, run it with Run, and report the results with
// WriteText or WriteJUnit. `parley test` and the API's
// POST /v1/tenants/{tenant}/bots/{bot}/tests both use it; docs/testing.md
// describes the file format.
package bottest
