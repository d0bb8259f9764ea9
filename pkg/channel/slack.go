package channel

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Slack's headers and limits, from the Events API documentation.
const (
	SlackSignatureHeader = "X-Slack-Signature"
	SlackTimestampHeader = "X-Slack-Request-Timestamp"
	// SlackRetryHeader counts Slack's retries of an event it thinks went
	// unanswered.
	SlackRetryHeader = "X-Slack-Retry-Num"
	// SlackTolerance is how old a request may be: Slack's advice against
	// replays.
	SlackTolerance = 5 * time.Minute
	// SlackMaxText is where Parley splits a reply: Slack advises keeping
	// a message's text under 4,000 characters (it truncates past 40,000).
	SlackMaxText = 4000
	// DefaultSlackAPI is Slack's Web API.
	DefaultSlackAPI = "https://slack.com/api"
)

// Errors of VerifySlack; they never repeat the secret or the signature.
var (
	ErrSlackUnsigned     = errors.New("slack: missing X-Slack-Signature or X-Slack-Request-Timestamp")
	ErrSlackStale        = errors.New("slack: request timestamp malformed or more than 5 minutes from now")
	ErrSlackBadSignature = errors.New("slack: signature does not match")
)

// SlackSignature is Slack's v0 signature of a request: "v0=" and the hex
// HMAC-SHA256, under the app's signing secret, of "v0:timestamp:body".
func SlackSignature(signingSecret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(signingSecret))
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySlack checks a request as Slack's SDKs do: a timestamp within
// SlackTolerance of now and a matching v0 signature of the raw body.
func VerifySlack(signingSecret string, h http.Header, body []byte, now time.Time) error {
	sig, ts := h.Get(SlackSignatureHeader), h.Get(SlackTimestampHeader)
	if sig == "" || ts == "" {
		return ErrSlackUnsigned
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > SlackTolerance {
		return ErrSlackStale
	}
	if signingSecret == "" || !hmac.Equal([]byte(sig), []byte(SlackSignature(signingSecret, ts, body))) {
		return ErrSlackBadSignature
	}
	return nil
}

// SlackRequest is an Events API request, as far as Parley reads it.
type SlackRequest struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	EventID   string `json:"event_id"`
	Event     struct {
		Type     string `json:"type"`
		Subtype  string `json:"subtype"`
		BotID    string `json:"bot_id"`
		User     string `json:"user"`
		Text     string `json:"text"`
		Channel  string `json:"channel"`
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
	} `json:"event"`
	// Authorizations name the app's own bot user among others.
	Authorizations []struct {
		UserID string `json:"user_id"`
		IsBot  bool   `json:"is_bot"`
	} `json:"authorizations"`
}

// Slack request types.
const (
	SlackURLVerification = "url_verification"
	SlackEventCallback   = "event_callback"
)

// ParseSlack decodes an Events API request.
func ParseSlack(body []byte) (SlackRequest, error) {
	var r SlackRequest
	if err := json.Unmarshal(body, &r); err != nil || r.Type == "" {
		return r, apiErrorf("slack", "event", "body is not an Events API request")
	}
	return r, nil
}

// Message returns the person's message an event_callback carries. ok is
// false for everything else: other event types, edits and other
// subtypes, any bot's messages (Parley's own replies come back as
// events too) and messages of ownBotUser. A message starts or continues
// a thread: its conversation is the channel and the thread's ts.
func (r SlackRequest) Message(ownBotUser string) (Message, bool) {
	e := r.Event
	if r.Type != SlackEventCallback || e.Type != "message" || e.Subtype != "" || e.BotID != "" ||
		e.User == "" || strings.TrimSpace(e.Text) == "" || e.Channel == "" || e.TS == "" {
		return Message{}, false
	}
	if e.User == ownBotUser {
		return Message{}, false
	}
	for _, a := range r.Authorizations {
		if a.IsBot && a.UserID == e.User {
			return Message{}, false
		}
	}
	thread := e.ThreadTS
	if thread == "" {
		thread = e.TS
	}
	return Message{DeliveryID: r.EventID, Conversation: SlackConversation(e.Channel, thread), User: e.User, Text: e.Text}, true
}

// SlackConversation names a thread: channel and thread_ts.
func SlackConversation(channel, threadTS string) string { return channel + ":" + threadTS }

// SplitSlackConversation is SlackConversation's inverse.
func SplitSlackConversation(conv string) (channel, threadTS string) {
	channel, threadTS, _ = strings.Cut(conv, ":")
	return channel, threadTS
}

// Slack calls the Web API.
type Slack struct {
	// BaseURL is DefaultSlackAPI, or a test server.
	BaseURL string
	Client  *http.Client
}

// PostMessage posts text in a thread with the bot's token (xoxb-...), in
// as many messages of at most SlackMaxText characters as it takes.
func (s Slack) PostMessage(ctx context.Context, botToken, channel, threadTS, text string) error {
	h := http.Header{"Authorization": {"Bearer " + botToken}}
	for _, part := range Split(text, SlackMaxText) {
		var ans struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		body := map[string]any{"channel": channel, "thread_ts": threadTS, "text": part}
		status, err := postJSON(ctx, s.Client, "slack", "chat.postMessage", strings.TrimRight(s.BaseURL, "/")+"/chat.postMessage", h, body, &ans)
		if err != nil {
			return err
		}
		if !ans.OK {
			return &APIError{Platform: "slack", Method: "chat.postMessage", Status: status, Description: ans.Error}
		}
	}
	return nil
}
