package inbound_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// signed is one request a tenant's backend sends, signed by the official
// standardwebhooks package.
type signed struct {
	id     string
	body   []byte
	header http.Header
}

// signWithStandardWebhooks signs each body (id: body) with secret as the
// tenant's backend would, with npm's standardwebhooks.
func signWithStandardWebhooks(t *testing.T, secret string, msgs ...signed) []signed {
	t.Helper()
	mods := npmModules(t, "node-webhooks", "standardwebhooks", ".ci/install-webhooks.sh")
	now := time.Now().Unix()
	inputs := make([]any, len(msgs))
	for i, m := range msgs {
		inputs[i] = map[string]any{"secret": secret, "id": m.id, "timestamp": now, "body": string(m.body)}
	}
	sigs := node(t, mods, "sign_standard.js", inputs...)
	for i := range msgs {
		msgs[i].header = http.Header{}
		msgs[i].header.Set("webhook-id", msgs[i].id)
		msgs[i].header.Set("webhook-timestamp", strconv.FormatInt(now, 10))
		msgs[i].header.Set("webhook-signature", sigs[i])
	}
	return msgs
}

func genericBody(conv, user, text string, async bool) []byte {
	b, _ := json.Marshal(map[string]any{"conversation_id": conv, "user_id": user, "text": text, "async": async})
	return b
}

func (w *world) webhookChannel(t testing.TB) platform.CreatedChannel {
	t.Helper()
	ch, err := w.svc.Channels().Create(ctx, w.admin, "shop", platform.ChannelInput{Kind: "webhook", Bot: "helper"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ch.Secret, webhook.SecretPrefix) {
		t.Fatalf("a webhook channel's secret is %q, want a whsec_ secret", ch.Secret)
	}
	return ch
}

func decodeReply(t *testing.T, body []byte) inbound.GenericReply {
	t.Helper()
	var r inbound.GenericReply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("reply %s: %v", body, err)
	}
	return r
}

func TestAWebhookChannelAnswersTheTenantsSignedMessagesInTheResponse(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		ch := w.webhookChannel(t)
		other, _ := webhook.NewSecret()
		w.llm.Add(llmtest.Text("Hello Ann"), llmtest.Text("Still here, Ann"), llmtest.Text("Hi Bob"))
		msgs := signWithStandardWebhooks(t, ch.Secret,
			signed{id: "msg_1", body: genericBody("conv-1", "ann", "hello", false)},
			signed{id: "msg_2", body: genericBody("conv-1", "ann", "are you there?", false)},
			signed{id: "msg_3", body: genericBody("conv-2", "bob", "hi", false)},
			signed{id: "msg_4", body: genericBody("conv-1", "ann", "pay 10 euros", false)},
			signed{id: "msg_5", body: []byte(`{"conversation_id":"conv-1","user_id":"ann"}`)},
		)
		stranger := signWithStandardWebhooks(t, other, signed{id: "msg_6", body: genericBody("conv-1", "ann", "hello", false)})

		resp, body := w.post(t, ch.ID, msgs[0].header, msgs[0].body)
		first := decodeReply(t, body)
		t.Run("a signed message is answered in the response", func(t *testing.T) {
			if resp.StatusCode != http.StatusOK || first.Status != "answered" || first.Text != "Hello Ann" || first.ConversationID != "conv-1" {
				t.Fatalf("answer %d %s", resp.StatusCode, body)
			}
		})
		t.Run("the first message of a conversation starts a dialog for its user", func(t *testing.T) {
			ds := w.dialogs(t)
			if len(ds) != 1 || ds[0].ID != first.DialogID || ds[0].UserID != "ann" || ds[0].Channel != "webhook" {
				t.Fatalf("dialogs %+v, want one of ann's from the webhook channel", ds)
			}
		})
		t.Run("a replayed delivery gets the first answer and is not answered again", func(t *testing.T) {
			resp, again := w.post(t, ch.ID, msgs[0].header, msgs[0].body)
			if resp.StatusCode != http.StatusOK || string(again) != string(body) || resp.Header.Get("Parley-Replayed") != "true" {
				t.Fatalf("replay answered %d %s (replayed %q), want the first answer", resp.StatusCode, again, resp.Header.Get("Parley-Replayed"))
			}
			if n := len(w.llm.Requests()); n != 1 {
				t.Fatalf("the model was asked %d times, want once", n)
			}
			if n := w.userMessages(t); n != 1 {
				t.Fatalf("%d user messages stored, want 1", n)
			}
		})
		t.Run("the next message of the conversation continues its dialog", func(t *testing.T) {
			_, body := w.post(t, ch.ID, msgs[1].header, msgs[1].body)
			r := decodeReply(t, body)
			if r.DialogID != first.DialogID || r.Text != "Still here, Ann" {
				t.Fatalf("answer %s, want dialog %s continued", body, first.DialogID)
			}
		})
		t.Run("another conversation gets a dialog of its own", func(t *testing.T) {
			_, body := w.post(t, ch.ID, msgs[2].header, msgs[2].body)
			r := decodeReply(t, body)
			if r.DialogID == first.DialogID || r.Text != "Hi Bob" || len(w.dialogs(t)) != 2 {
				t.Fatalf("answer %s, want a second dialog", body)
			}
		})
		refusals := []struct {
			name   string
			header http.Header
			body   []byte
			want   int
		}{
			{"a body changed after signing is refused", msgs[3].header, []byte(strings.Replace(string(msgs[3].body), "10", "1000", 1)), http.StatusUnauthorized},
			{"a message signed with another secret is refused", stranger[0].header, stranger[0].body, http.StatusUnauthorized},
			{"an unsigned message is refused", http.Header{}, msgs[3].body, http.StatusUnauthorized},
			{"a signed message without text is invalid, with its pointer", msgs[4].header, msgs[4].body, http.StatusBadRequest},
		}
		for _, tc := range refusals {
			t.Run(tc.name, func(t *testing.T) {
				before := w.userMessages(t)
				resp, body := w.post(t, ch.ID, tc.header, tc.body)
				if resp.StatusCode != tc.want && !(tc.want == http.StatusBadRequest && resp.StatusCode == http.StatusUnprocessableEntity) {
					t.Fatalf("answered %d %s, want %d", resp.StatusCode, body, tc.want)
				}
				if tc.want == http.StatusBadRequest && !strings.Contains(string(body), "/text") {
					t.Fatalf("answer %s does not point at /text", body)
				}
				if w.userMessages(t) != before {
					t.Fatal("a refused message was stored")
				}
			})
		}
		t.Run("a disabled channel answers as if it did not exist", func(t *testing.T) {
			off := false
			if _, err := w.svc.Channels().Update(ctx, w.admin, "shop", ch.ID, platform.ChannelPatch{Enabled: &off}); err != nil {
				t.Fatal(err)
			}
			resp, body := w.post(t, ch.ID, msgs[3].header, msgs[3].body)
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("answered %d %s, want 404", resp.StatusCode, body)
			}
		})
	})
}

func TestAnAsyncMessageIsAnsweredThroughTheOutboundWebhookWithTheExternalIDs(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		if _, err := w.svc.Webhooks().Create(ctx, w.admin, "shop", platform.WebhookInput{URL: "https://hooks.example.com/in",
			Events: []string{webhook.MessageCreated}}); err != nil {
			t.Fatal(err)
		}
		ch := w.webhookChannel(t)
		w.llm.Add(llmtest.Text("Your order shipped."))
		msgs := signWithStandardWebhooks(t, ch.Secret, signed{id: "msg_a", body: genericBody("ticket-77", "cust-9", "where is my order?", true)})
		resp, body := w.post(t, ch.ID, msgs[0].header, msgs[0].body)
		r := decodeReply(t, body)
		if resp.StatusCode != http.StatusAccepted || r.Status != "accepted" || r.DialogID == "" {
			t.Fatalf("async answered %d %s, want 202 accepted with the dialog", resp.StatusCode, body)
		}
		w.settle(t)
		t.Run("a replay of the async delivery is acknowledged again, not answered", func(t *testing.T) {
			resp, again := w.post(t, ch.ID, msgs[0].header, msgs[0].body)
			w.settle(t)
			if resp.StatusCode != http.StatusAccepted || string(again) != string(body) || len(w.llm.Requests()) != 1 {
				t.Fatalf("replay answered %d %s after %d model calls", resp.StatusCode, again, len(w.llm.Requests()))
			}
		})
		t.Run("message.created carries the channel and the conversation's external ids", func(t *testing.T) {
			got := platformtest.OutboxData(t, w.st, webhook.MessageCreated)
			if len(got) != 2 {
				t.Fatalf("%d message.created events, want the user's and the reply: %v", len(got), got)
			}
			for _, d := range got {
				want := "map[conversation_id:ticket-77 user_id:cust-9]"
				if fmt.Sprint(d["external"]) != want || fmt.Sprint(d["channel"]) != fmt.Sprintf("map[id:%s kind:webhook]", ch.ID) ||
					d["dialog_id"] != r.DialogID {
					t.Fatalf("message.created data %v, want external %s and the channel", d, want)
				}
			}
			if msg := got[1]["message"].(map[string]any); msg["text"] != "Your order shipped." || msg["role"] != "assistant" {
				t.Fatalf("second message.created %v, want the reply", msg)
			}
		})
	})
}
