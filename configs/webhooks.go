package configs

import "embed"

// webhookSchemas are the JSON Schemas of the webhook events, one per
// type: configs/webhooks/<type>.schema.json, each the whole body
// ({type, timestamp, tenant, data}). docs/events.md documents them.
//
//go:embed webhooks/*.schema.json
var webhookSchemas embed.FS

// WebhookSchema returns the draft-07 JSON Schema of the webhook event
// type typ.
func WebhookSchema(typ string) ([]byte, error) {
	return webhookSchemas.ReadFile("webhooks/" + typ + ".schema.json")
}
