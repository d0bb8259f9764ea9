// Package webhook is the wire side of Parley's outbound webhooks, as the
// Standard Webhooks specification (standardwebhooks.com) defines it:
// secrets (whsec_ + base64), the signature headers, the event envelope and
// catalogue, the retry schedule, and one HTTP attempt with its outcome.
// It keeps no state and touches no database; pkg/platform stores the
// endpoints and the outbox and runs the deliveries.
//
// Usage:
//
//	secret, _ := webhook.NewSecret()                           // whsec_...
//	key, _ := webhook.SecretKey(secret)
//	body, _ := webhook.Body(webhook.DialogCreated, "acme", time.Now(), data)
//	res := webhook.Send(ctx, outboundClient, webhook.Message{ID: eventID, URL: url, Body: body, Keys: [][]byte{key}}, 0, time.Now)
//	if res.Outcome == webhook.Retry {
//		wait, ok := webhook.NextDelay(webhook.Schedule, attempts, res.RetryAfter) // ok false: the schedule is spent
//	}
//
// Receivers verify with any Standard Webhooks library (Verify here is the
// same check, for tests and for Parley's own inbound channels).
package webhook
