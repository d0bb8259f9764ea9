package inbound_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// BenchmarkAWebhookChannelTurn measures one signed message through the
// inbound route, answered in the response by the scripted model on
// SQLite: verification, the delivery record, the conversation's dialog
// and the turn. Half the iterations start a conversation, half continue
// one.
func BenchmarkAWebhookChannelTurn(b *testing.B) {
	benchWebhookChannel(b, false)
}

// BenchmarkARetriedWebhookDelivery measures answering a retry of a
// delivery already answered: the stored answer, no model call.
func BenchmarkARetriedWebhookDelivery(b *testing.B) {
	benchWebhookChannel(b, true)
}

func benchWebhookChannel(b *testing.B, retry bool) {
	w := newWorld(b, openSQLite(b))
	w.llm.SkipRecording = true
	w.llm.Cycle = true
	w.llm.Add(llmtest.Text("ok"))
	ch := w.webhookChannel(b)
	key, _ := webhook.SecretKey(ch.Secret)
	for i := 0; b.Loop(); i++ {
		id, conv := fmt.Sprintf("msg_%d", i), fmt.Sprintf("conv-%d", i/2)
		if retry {
			id, conv = "msg_once", "conv-0"
		}
		body := genericBody(conv, "u", "hi", false)
		resp, out := w.post(b, ch.ID, webhook.Sign(id, time.Now(), body, key), body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("answered %d %s", resp.StatusCode, out)
		}
	}
}
