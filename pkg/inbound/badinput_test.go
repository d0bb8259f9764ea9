package inbound_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/webhook"
)

// TestAChannelRefusesTextNoDatabaseCanHold: a signed message whose text or
// ids hold a NUL character is the sender's mistake, a 4xx on every
// database and no error in the log. PostgreSQL refuses NUL in text, so
// without a check it would be a 500 the platform retries forever.
func TestAChannelRefusesTextNoDatabaseCanHold(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		ch := w.webhookChannel(t)
		msgs := signWithStandardWebhooks(t, ch.Secret,
			signed{id: "msg_1", body: []byte(`{"conversation_id":"conv-1","user_id":"ann","text":"hi\u0000there"}`)},
			signed{id: "msg_2", body: []byte(`{"conversation_id":"conv\u0000-1","user_id":"ann","text":"hi"}`)},
			signed{id: "msg_3", body: []byte(`{"conversation_id":"conv-1","user_id":"a\u0000nn","text":"hi"}`)},
		)
		for i, m := range msgs {
			before := len(w.logs.String())
			resp, body := w.post(t, ch.ID, m.header, m.body)
			if resp.StatusCode < 400 || resp.StatusCode >= 500 || !strings.Contains(string(body), `"error"`) {
				t.Errorf("message %d: %d %s; want a 4xx that says what is wrong", i+1, resp.StatusCode, body)
			}
			if logged := w.logs.String()[before:]; strings.Contains(logged, `"level":"ERROR"`) {
				t.Errorf("message %d: the server logged %s", i+1, logged)
			}
		}
		if n := w.userMessages(t); n != 0 {
			t.Fatalf("%d messages stored, want none", n)
		}
	})
}

// TestAChannelRefusesDeliveryIDsNoDatabaseCanHold: a platform's delivery
// id is stored in a column of 255 characters, which PostgreSQL enforces
// (and it refuses bytes that are not UTF-8); SQLite stores anything. A
// validly signed request with such an id is a 4xx with its pointer on
// both, never a 500 the platform retries.
func TestAChannelRefusesDeliveryIDsNoDatabaseCanHold(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		hook := w.webhookChannel(t)
		slack := w.slackChannel(t)
		body := genericBody("conv-1", "ann", "hi", false)
		long := strings.Repeat("m", 256)
		refusals := []struct {
			name, pointer string
			post          func() (*http.Response, []byte)
		}{
			{"a webhook-id of 256 characters", "/headers/webhook-id", func() (*http.Response, []byte) {
				return w.post(t, hook.ID, signWithStandardWebhooks(t, hook.Secret, signed{id: long, body: body})[0].header, body)
			}},
			{"an async message's webhook-id of 256 characters", "/headers/webhook-id", func() (*http.Response, []byte) {
				async := genericBody("conv-1", "ann", "hi", true)
				return w.post(t, hook.ID, signWithStandardWebhooks(t, hook.Secret, signed{id: long, body: async})[0].header, async)
			}},
			{"a webhook-id that is not UTF-8", "/headers/webhook-id", func() (*http.Response, []byte) {
				key, _ := webhook.SecretKey(hook.Secret)
				return w.post(t, hook.ID, webhook.Sign("msg_\xff\xfe", time.Now(), body, key), body)
			}},
			{"a Slack event_id of 256 characters", "/event_id", func() (*http.Response, []byte) {
				ev := slackEvent(long, map[string]any{"user": "U1", "text": "hello bot", "channel": "C1", "ts": "1700000001.000100"})
				return w.post(t, slack.ID, slackHeaders(slackSigningSecret, time.Now(), ev), ev)
			}},
		}
		for _, tc := range refusals {
			t.Run(tc.name+" is refused with its pointer", func(t *testing.T) {
				before := len(w.logs.String())
				resp, got := tc.post()
				if resp.StatusCode < 400 || resp.StatusCode >= 500 || !strings.Contains(string(got), `"pointer":"`+tc.pointer+`"`) {
					t.Errorf("%d %s; want a 4xx pointing at %s", resp.StatusCode, got, tc.pointer)
				}
				if logged := w.logs.String()[before:]; strings.Contains(logged, `"level":"ERROR"`) {
					t.Errorf("the server logged %s", logged)
				}
			})
		}
		if n := w.userMessages(t); n != 0 {
			t.Fatalf("%d messages stored, want none", n)
		}
	})
}
