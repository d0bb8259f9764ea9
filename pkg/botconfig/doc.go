// Package botconfig loads, validates and compiles tenant agent configs.
//
// A config is the JSON a tenant authors (see docs/agent-config.md and
// configs/agent-config.schema.json). The life of one:
//
//	cfg, err := botconfig.Load(data)   // strict: syntax, schema, semantics
//	bot, err := botconfig.Compile(cfg) // prompt, tool specs, limits, fingerprint
//	prompt := bot.Prompt(vars)         // per dialog: adds exposed context facts
//	req, err := bot.Tools[i].Endpoint.Render(args, vars) // per tool call
//
// Every error about a config is a Problems: all problems at once, each with
// the RFC 6901 JSON pointer of the offending value and a message that says
// what to do, ready to serve as 422 details. Options carries what the
// operator decides (the registered native tools); the package-level
// functions use the defaults.
//
// Compile is pure and deterministic, and a Bot is immutable: share it
// between dialogs. Endpoint templates are parsed and checked at compile time,
// so Render only substitutes and escapes; its errors never contain secret
// values, and RenderedRequest.Redact scrubs them from any other text.
package botconfig
