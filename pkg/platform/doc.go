// Package platform is the application layer: tenants, users, API keys,
// secrets, bots and versions (dialogs, keys' metering and runtime hooks
// come next). HTTP handlers and commands call it; it calls pkg/store,
// pkg/auth and pkg/botconfig.
//
// Build one Service with New and share it. Every method takes the calling
// *Principal (from Authenticate, or Operator() for command-line tools) and
// checks it with the casbin Authorizer before touching data, so every entry
// point is authorised the same way. Tenant and bot arguments accept an id or
// a slug.
//
// Every error is an *Error with a Code (invalid, not_found, conflict,
// unauthorized, forbidden, rate_limited, internal), a caller-safe Message and,
// for invalid input, Details with JSON pointers. Another tenant's resource is
// not_found, never forbidden, so ids cannot be probed. Internal causes are
// logged here and never appear in Message.
//
//	svc, _ := platform.New(st, platform.Options{Sealer: sealer, PlatformToken: tok})
//	p, err := svc.Authenticate(ctx, bearer)
//	bot, v1, err := svc.CreateBot(ctx, p, "acme", "support", configJSON)
package platform
