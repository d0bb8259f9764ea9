package inbound_test

import (
	"strings"
	"testing"
)

// TestAChannelRefusesTextNoDatabaseCanHold: a signed message whose text or
// ids hold a NUL character is the sender's mistake, a 4xx on every
// database and no error in the log. PostgreSQL refuses NUL in text, so
// without a check it would be a 500 the platform retries forever.
func TestAChannelRefusesTextNoDatabaseCanHold(t *testing.T) {
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
