package channel

import (
	"encoding/json"
	"strings"
)

// GenericRequest is what the tenant's backend POSTs to a webhook channel,
// signed with the channel's whsec_ secret the Standard Webhooks way.
type GenericRequest struct {
	// ConversationID is the backend's own conversation id: one dialog per
	// conversation.
	ConversationID string `json:"conversation_id"`
	// UserID is the backend's id of the user who wrote Text.
	UserID string `json:"user_id"`
	Text   string `json:"text"`
	// Async answers 202 at once; the reply then goes out as the outbound
	// webhook message.created, with the conversation and user ids.
	Async bool `json:"async"`
}

// MaxExternalID caps a conversation or user id from a platform.
const MaxExternalID = 200

// FieldError is a problem with one field of a request, safe to show its
// sender.
type FieldError struct {
	// Pointer is the field's JSON pointer; "" is the whole body.
	Pointer string
	Message string
}

func (e *FieldError) Error() string { return e.Pointer + ": " + e.Message }

// ParseGeneric decodes and checks a webhook channel's request; its error
// is a *FieldError.
func ParseGeneric(body []byte) (GenericRequest, error) {
	var req GenericRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, &FieldError{Message: "body must be a JSON object {conversation_id, user_id, text, async?}"}
	}
	switch {
	case strings.TrimSpace(req.ConversationID) == "":
		return req, &FieldError{"/conversation_id", "is required"}
	case len(req.ConversationID) > MaxExternalID:
		return req, &FieldError{"/conversation_id", "must be at most 200 bytes"}
	case len(req.UserID) > MaxExternalID:
		return req, &FieldError{"/user_id", "must be at most 200 bytes"}
	case strings.TrimSpace(req.Text) == "":
		return req, &FieldError{"/text", "is required"}
	}
	return req, nil
}
