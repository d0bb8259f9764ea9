package botconfig

import (
	"encoding/json"
	"errors"
)

// TODO(foundation): this file holds the agreed API only; the template parser
// and renderer replace these bodies.

// Vars holds the values of {{var}} placeholders for one dialog: the system
// variables (dialog_id, tenant_id, bot_id, chatbot_id, user_id, channel,
// locale, now), the config's context variables, and "secrets.NAME" entries.
type Vars map[string]string

// EndpointTemplate is a parsed endpoint whose placeholders were all checked
// at compile time.
type EndpointTemplate struct {
	endpoint Endpoint
}

// Render fills the template with one call's arguments (a JSON object,
// already validated against the tool's schema) and the dialog's vars.
func (t *EndpointTemplate) Render(args json.RawMessage, vars Vars) (*RenderedRequest, error) {
	return nil, errors.New("not implemented")
}

// Redact replaces every secret value used in r with "[redacted]" in s, for
// error texts and logs.
func (r *RenderedRequest) Redact(s string) string {
	return s
}
