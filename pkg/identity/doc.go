// Package identity verifies the signed end-user tokens a tenant's backend
// issues, so a widget visitor is who the tenant says, not who the page
// claims. A token is a short-lived JWT whose sub is the user's id; its
// other claims can fill the bot's identity context variables.
//
// A tenant verifies with one of two kinds of key (PUT
// /v1/tenants/{tenant}/identity): an HS256 secret shared with its backend,
// or RS256/ES256 public keys published at a JWKS URL, fetched through the
// SSRF-safe outbound client, cached, and refetched (at most every
// RefetchAfter) when a token names a key id the cache does not know.
//
// Usage:
//
//	v := identity.NewVerifier(outboundClient, time.Now)
//	user, err := v.Verify(ctx, identity.Settings{Secret: secret, Audience: "shop"}, token)
//	var refused *identity.Error
//	if errors.As(err, &refused) { ... refused.Reason ... }
//
// Refusals never include the token.
package identity
