// Package webhook is the wire side of Parley's outbound webhooks, as the
// Standard Webhooks specification (standardwebhooks.com) defines it:
// secrets (whsec_ + base64), the signature headers, the event envelope and
// catalogue, the retry schedule, and one HTTP attempt with its outcome.
// It keeps no state and touches no database; pkg/platform stores the
// endpoints and the outbox and runs the deliveries.
//
// Usage:
//
//	secret, _ := webhook.NewSecret()
//	h := webhook.Sign(msgID, time.Now(), body, secret)        // webhook-id, -timestamp, -signature
//	res := webhook.Send(ctx, client, url, msgID, time.Now(), body, secrets...)
//	if res.Outcome == webhook.Retry { next := webhook.NextDelay(schedule, attempts, res.RetryAfter) }
//
// Receivers verify with any Standard Webhooks library (Verify here is the
// same check, for tests and for Parley's own inbound channels).
package webhook
