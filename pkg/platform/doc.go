// Package platform is the application layer: tenants, users, API keys,
// secrets, bots and versions (Service), and dialogs answered by the agent
// loop, metered and rate limited (Runtime). HTTP handlers and commands call
// it; it calls pkg/store, pkg/auth, pkg/botconfig, pkg/agent and the tools.
//
// Build one Service with New and share it. Every method takes the calling
// *Principal (from Authenticate, or Operator() for command-line tools) and
// checks it with the casbin Authorizer before touching data, so every entry
// point is authorised the same way. Tenant and bot arguments accept an id or
// a slug.
//
// Secrets are write-only below admin, and so is where they go: a caller who
// may not write secrets (an editor) cannot save a bot or version that sends
// a {{secrets.NAME}} to an origin no published version of the tenant sends
// it to (forbidden, with a detail per new secret and origin). Publishing
// takes an admin, so a published destination is an approved one; admins,
// admin keys and the operator may save anything. Nothing extra is stored.
//
// Every error is an *Error with a Code (invalid, not_found, conflict,
// unauthorized, forbidden, rate_limited, internal), a caller-safe Message and,
// for invalid input or a refused config, Details with JSON pointers. Another
// tenant's resource is not_found, never forbidden, so ids cannot be probed.
// Internal causes are logged here and never appear in Message.
//
//	svc, _ := platform.New(st, platform.Options{Sealer: sealer, PlatformToken: tok})
//	p, err := svc.Authenticate(ctx, bearer)
//	bot, v1, err := svc.CreateBot(ctx, p, "acme", "support", configJSON)
//
// Dialogs: build one Runtime over the Service with the model provider, the
// outbound client and the MCP pool. SendMessage stores the user's text
// before any model call, takes the dialog's lease (one loop per dialog,
// across processes), runs the loop with hooks that store every message as
// it is made and meter every model call, and streams the loop's events
// (plus "dialog" and "message") to a sink. A reply cut off by a crash is
// left "interrupted"; a paused dialog resumes with SubmitToolResults or
// Confirm from any instance.
//
//	rt, _ := platform.NewRuntime(svc, platform.RuntimeOptions{Provider: p, DefaultModel: "gpt-4o-mini"})
//	d, err := rt.CreateDialog(ctx, p, "acme", "support", platform.CreateDialogInput{Context: vars})
//	turn, err := rt.SendMessage(ctx, p, "acme", d.ID, platform.SendInput{Text: "hi"}, sink)
package platform
