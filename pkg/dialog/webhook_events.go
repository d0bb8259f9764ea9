package dialog

// The data of the webhook events the dialog runtime writes, as
// docs/webhooks.md documents them; platform.Service.WithEvent wraps each
// in the envelope {type, timestamp, tenant, data}.

// dialogCreatedData is dialog.created's data.
type dialogCreatedData struct {
	Dialog Dialog `json:"dialog"`
	// Bot is the bot's slug.
	Bot string `json:"bot"`
}
