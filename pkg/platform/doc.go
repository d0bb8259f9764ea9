// Package platform is the application layer: tenants, users, API keys,
// secrets, bots and versions, usage reports and who may do what (Service).
// HTTP handlers, commands, the dialog runtime (pkg/dialog) and the inbound
// channels (pkg/inbound) call it; it calls pkg/store, pkg/auth,
// pkg/botconfig and the wire packages pkg/webhook and pkg/channel.
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
// Outbound webhooks (webhooks.go, webhook_*.go): a tenant's endpoints, and
// WithEvent, which writes an event to the outbox in the transaction of the
// fact it reports, only when an enabled endpoint of the tenant subscribes
// (a per-process cache, kept in step by WatchWebhooks, decides without the
// database). A Deliverer, run by every server process, sends the outbox
// with the Standard Webhooks signatures, retries and delivery log of
// pkg/webhook.
//
// Teams (members.go): members are invited by email with a role; a person
// without an account gets a one-time invite token (AcceptInvite sets the
// password and signs them in). Role changes and removals lock the tenant's
// memberships in their transaction, so the last owner can be neither
// demoted nor removed, even by two owners at once.
//
// The audit log (audit.go): each audited change writes its entry (who:
// user, key or operator, with the request's address; what; on which
// target) in the change's own transaction, through audited or
// auditedEvent; the dialog runtime's erasures and exports call Audit.
//
// Every error is an *Error with a Code (invalid, not_found, conflict,
// unauthorized, forbidden, rate_limited, internal), a caller-safe Message and,
// for invalid input or a refused config, Details with JSON pointers. Another
// tenant's resource is not_found, never forbidden, so ids cannot be probed.
// Internal causes are logged here and never appear in Message.
//
//	svc, err := platform.New(st, platform.Options{Sealer: sealer, Authorizer: authz, Clock: time.Now, Logger: log})
//	p, err := svc.Authenticate(ctx, bearer)
//	bot, v1, err := svc.CreateBot(ctx, p, "acme", "support", configJSON)
package platform
