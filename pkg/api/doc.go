// Package api is Parley's HTTP layer on gin: routes, authentication, request
// ids, logs, metrics and the mapping of errors to statuses. Handlers only
// decode, call the platform Service, the dialog runtime or the inbound
// channels with the caller's Principal, and encode; those decide what each
// caller may do. docs/architecture.md follows one request through them.
//
//	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Logger: log, Metrics: reg, Web: web.Files()})
//	http.ListenAndServe(addr, h)
//
// New requires the platform, the dialog runtime, a logger and a metrics
// registry, and fails naming any that is missing.
//
// Layout: routes.go declares every route in one place; one file per resource
// (tenants.go, keys.go, secrets.go, bots.go, versions.go, dialogs.go,
// messages.go, handoff.go, webhooks.go, channels.go, members.go, usage.go,
// ...; sse.go writes event streams); the request and response types live in
// apiclient, one file per resource beside types.go, shared with the Go
// client.
//
// Message routes answer JSON (the turn's new messages and its done event),
// or server-sent events with "Accept: text/event-stream": one
// "event: <type>" and "data: <json>" per event, flushed at once, and a
// ": ping" comment every 15 s. An Idempotency-Key header replays the first
// response of a finished request and turns a concurrent duplicate away
// with 409; an answer that failed on the server's side and says to retry
// (a reply cut by shutdown) is not recorded, so the retry runs the turn.
// Rate limits answer 429 with Retry-After.
//
// Credentials: "Authorization: Bearer <token>" with an sk_ or pk_ key, the
// platform token or a session token, or the HttpOnly session cookie set by
// POST /v1/auth/login. Unsafe requests authenticated by the cookie must also
// carry the X-Parley-CSRF header or a same-origin Origin header, so another
// site cannot forge them. POST /v1/validate needs any valid credential and
// no permission, unless it names a tenant (then: reading its versions).
//
// Errors are {"error": {"code", "message", "details"}}; statusOf in
// errors.go is the one table from code to status. Internal errors are
// logged with their cause and reach clients only as "internal".
//
// Two more faces serve every published bot, each in its own files and
// each taking only a tenant's sk_ key: openai.go (with openai_wire.go and
// openai_stream.go) speaks OpenAI Chat Completions at
// /v1/chat/completions and /v1/models, in OpenAI's shapes and error
// format; mcp.go serves /v1/tenants/{tenant}/bots/{bot}/mcp as an MCP
// server over streamable HTTP with the official SDK. Both run turns
// through the same runtime calls as the message routes (docs/api.md).
package api
