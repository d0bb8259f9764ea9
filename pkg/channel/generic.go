package channel

import (
	"encoding/json"
	"errors"
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

// ParseGeneric decodes and checks a webhook channel's request. Its errors
// name the field (a JSON pointer) and are safe to show the sender.
func ParseGeneric(body []byte) (GenericRequest, error) {
	var req GenericRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, errors.New("body must be a JSON object {conversation_id, user_id, text, async?}")
	}
	switch {
	case strings.TrimSpace(req.ConversationID) == "":
		return req, errors.New("/conversation_id: is required")
	case len(req.ConversationID) > MaxExternalID:
		return req, errors.New("/conversation_id: must be at most 200 bytes")
	case len(req.UserID) > MaxExternalID:
		return req, errors.New("/user_id: must be at most 200 bytes")
	case strings.TrimSpace(req.Text) == "":
		return req, errors.New("/text: is required")
	}
	return req, nil
}
