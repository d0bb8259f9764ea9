package dialog

import "unicode/utf8"

// The data of the webhook events the dialog runtime writes, as
// docs/webhooks.md documents them; platform.Service.WithEvent wraps each
// in the envelope {type, timestamp, tenant, data}.

// dialogCreatedData is dialog.created's data.
type dialogCreatedData struct {
	Dialog Dialog `json:"dialog"`
	// Bot is the bot's slug.
	Bot string `json:"bot"`
}

// toolErrorExcerpt caps the tool output a tool.failed event carries.
const toolErrorExcerpt = 1024

// toolFailedData is tool.failed's data: a call whose result is an error,
// as the model saw it (secrets never reach tool results).
type toolFailedData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	CallID   string `json:"call_id"`
	Tool     string `json:"tool"`
	// Kind is the tool's kind (http, mcp, native, ...); Status the HTTP
	// status of an HTTP tool's answer, when it had one.
	Kind   string `json:"kind,omitempty"`
	Status int    `json:"status,omitempty"`
	// Error is the start of the result the model was given.
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// excerpt returns s cut to at most n bytes on a rune boundary.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
