package channel

// Channel kinds, as POST /channels names them.
const (
	KindWebhook  = "webhook"
	KindTelegram = "telegram"
	KindSlack    = "slack"
)

// Kinds lists every channel kind.
var Kinds = []string{KindWebhook, KindTelegram, KindSlack}

// Message is one user message a platform sent in, in the platform's terms.
type Message struct {
	// DeliveryID identifies the platform's delivery (a webhook-id, an
	// update_id, an event_id): a retry carries the same one.
	DeliveryID string
	// Conversation is the platform's conversation (a chat, a thread, the
	// tenant's conversation id); one conversation is one dialog.
	Conversation string
	// User is the platform's id of who wrote the message.
	User string
	Text string
}
