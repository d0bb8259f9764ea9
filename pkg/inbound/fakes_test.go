package inbound_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// fakeTelegram is a Bot API server as core.telegram.org/bots/api
// documents it: POST /bot<token>/<method> with a JSON body, answering
// {"ok": true, "result": ...} or {"ok": false, "error_code", "description"}.
type fakeTelegram struct {
	srv   *httptest.Server
	token string
	mu    sync.Mutex
	sent  []tgSent
	hooks []tgWebhook
	// throttle is how many sendMessage calls are still to be refused
	// with 429, as the Bot API does past its flood limits.
	throttle int
}

type tgSent struct {
	ChatID string
	Text   string
}

type tgWebhook struct {
	URL            string   `json:"url"`
	SecretToken    string   `json:"secret_token"`
	AllowedUpdates []string `json:"allowed_updates"`
}

// telegramSecretToken is the charset and length setWebhook allows.
var telegramSecretToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func newFakeTelegram(t testing.TB) *fakeTelegram {
	f := &fakeTelegram{token: "123456:ABC-test-telegram-token"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTelegram) serve(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	refuse := func(status int, desc string) {
		answer(status, map[string]any{"ok": false, "error_code": status, "description": desc})
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot"+f.token+"/")
	if !ok {
		refuse(http.StatusUnauthorized, "Unauthorized")
		return
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		refuse(http.StatusBadRequest, "Bad Request: expected a JSON POST")
		return
	}
	switch rest {
	case "sendMessage":
		f.mu.Lock()
		throttled := f.throttle > 0
		if throttled {
			f.throttle--
		}
		f.mu.Unlock()
		if throttled {
			answer(http.StatusTooManyRequests, map[string]any{"ok": false, "error_code": 429,
				"description": "Too Many Requests: retry after 1", "parameters": map[string]any{"retry_after": 1}})
			return
		}
		var body struct {
			ChatID json.RawMessage `json:"chat_id"`
			Text   string          `json:"text"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.ChatID) == 0 {
			refuse(http.StatusBadRequest, "Bad Request: chat_id is empty")
			return
		}
		if n := utf8.RuneCountInString(body.Text); n == 0 || n > 4096 {
			refuse(http.StatusBadRequest, "Bad Request: message is too long")
			return
		}
		var chat string
		if err := json.Unmarshal(body.ChatID, &chat); err != nil {
			chat = string(body.ChatID) // Integer or String, as the API allows
		}
		f.mu.Lock()
		f.sent = append(f.sent, tgSent{ChatID: chat, Text: body.Text})
		f.mu.Unlock()
		answer(http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": 1, "text": body.Text}})
	case "setWebhook":
		var body tgWebhook
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !strings.HasPrefix(body.URL, "http") {
			refuse(http.StatusBadRequest, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
			return
		}
		if body.SecretToken != "" && !telegramSecretToken.MatchString(body.SecretToken) {
			refuse(http.StatusBadRequest, "Bad Request: secret token contains unallowed characters")
			return
		}
		f.mu.Lock()
		f.hooks = append(f.hooks, body)
		f.mu.Unlock()
		answer(http.StatusOK, map[string]any{"ok": true, "result": true, "description": "Webhook was set"})
	default:
		refuse(http.StatusNotFound, "Not Found: method not found")
	}
}

func (f *fakeTelegram) messages() []tgSent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tgSent(nil), f.sent...)
}

// fakeSlack is Slack's Web API chat.postMessage as api.slack.com
// documents it: a bot token in Authorization: Bearer xoxb-..., a JSON
// body, and HTTP 200 with {"ok": true} or {"ok": false, "error": code}.
type fakeSlack struct {
	srv   *httptest.Server
	token string
	mu    sync.Mutex
	posts []slackPost
}

type slackPost struct {
	Channel  string `json:"channel"`
	Text     string `json:"text"`
	ThreadTS string `json:"thread_ts"`
}

func newFakeSlack(t testing.TB) *fakeSlack {
	f := &fakeSlack{token: "xoxb-1111-2222-testslacktoken"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSlack) serve(w http.ResponseWriter, r *http.Request) {
	answer := func(v map[string]any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(v)
	}
	if r.URL.Path != "/chat.postMessage" || r.Method != http.MethodPost {
		w.WriteHeader(http.StatusNotFound)
		answer(map[string]any{"ok": false, "error": "unknown_method"})
		return
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "Bearer xoxb-") {
		answer(map[string]any{"ok": false, "error": "not_authed"})
		return
	}
	if auth != "Bearer "+f.token {
		answer(map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		answer(map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	var p slackPost
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		answer(map[string]any{"ok": false, "error": "invalid_json"})
		return
	}
	if p.Channel == "" {
		answer(map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	if p.Text == "" {
		answer(map[string]any{"ok": false, "error": "no_text"})
		return
	}
	f.mu.Lock()
	f.posts = append(f.posts, p)
	f.mu.Unlock()
	answer(map[string]any{"ok": true, "channel": p.Channel, "ts": "1700000000.000200", "message": map[string]any{"text": p.Text}})
}

func (f *fakeSlack) messages() []slackPost {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]slackPost(nil), f.posts...)
}
