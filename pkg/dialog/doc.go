// Package dialog is the dialog runtime: it creates and reads dialogs and
// answers their messages with the agent loop (Runtime). It sits beside
// pkg/platform in the application layer and calls it to authorise every
// caller and to read bots, versions and secrets; it calls pkg/store,
// pkg/agent, pkg/botconfig, pkg/llm and the tools. HTTP handlers and
// commands call it.
//
// Build one Runtime with New over the platform Service and its store, the
// model provider, the outbound client and the MCP pool; New fails, naming
// the option, when a required dependency is missing. SendMessage stores
// the user's text before any model call, takes the dialog's lease (one
// loop per dialog, across processes), runs the loop with hooks that store
// every message as it is made and meter every model call, and streams the
// loop's events (plus "dialog" and "message") to a sink. A reply cut off
// by a crash is left "interrupted"; a paused dialog resumes with
// SubmitToolResults or Confirm from any instance. Texts sent while this
// process answers a dialog join that run; Idempotency-Key claims let a
// retried request replay the first response.
//
// Inside, a run's persistence (its lease, its reply's row, the events that
// wait for that row's write) is a runRecord (record.go) whose transitions
// are the only way it changes.
//
// The API's OpenAI and MCP faces use the same calls: CreateDialog can seed
// a new dialog with an earlier conversation (CreateDialogInput.History, a
// trailing tool call leaving it paused), SendInput and ToolResultsInput
// carry the caller's own client tools, a principal narrowed with
// Principal.ForBot reaches one bot's dialogs only, and ChatBots / ChatBot
// list and resolve the published bots a caller may chat with.
//
// A bot's agents entries are tools that run other bots of the tenant as
// sub-runs (agents.go): each in a dialog of its own, closed and linked to
// the caller's (ParentDialogID), its events nested in the caller's stream
// between AgentStart and AgentEnd, its model calls metered on its bot.
//
// Errors are *platform.Error, with the codes and caller-safe messages of
// pkg/platform; RetryAfter says how long a rate_limited one asks to wait,
// and QuotaReached whether it is the daily token quota's.
//
//	rt, err := dialog.New(dialog.Options{Service: svc, Store: st, Catalog: catalog,
//		HTTPClient: client, Natives: builtin.NewRegistry(), Clock: time.Now, Logger: log,
//		Provider: p, DefaultModel: "gpt-4o-mini"})
//	d, err := rt.CreateDialog(ctx, principal, "acme", "support", dialog.CreateDialogInput{Context: vars})
//	turn, err := rt.SendMessage(ctx, principal, "acme", d.ID, dialog.SendInput{Text: "hi"}, sink)
package dialog
