package inbound_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
)

// deskBot is a bot that hands a dialog to a person when asked.
const deskBot = `{"basic_settings":{"name":"Desk"},"native_tools":["handoff_to_human"]}`

// deskBot creates and publishes the bot desk, which hands a dialog to a
// person when the model calls handoff_to_human.
func (w *world) deskBot(t *testing.T) {
	t.Helper()
	if _, _, err := w.svc.Bots().Create(ctx, w.admin, "shop", "desk", []byte(deskBot)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Versions().Publish(ctx, w.admin, "shop", "desk", 1); err != nil {
		t.Fatal(err)
	}
}

// handedOffDialog returns the one dialog of the conversation, which the
// bot must have handed off.
func (w *world) handedOffDialog(t *testing.T) string {
	t.Helper()
	var ds []store.Dialog
	if err := w.st.DB().Where("status = ?", "handoff").Find(&ds).Error; err != nil || len(ds) != 1 {
		t.Fatalf("handed-off dialogs %+v, %v; want one", ds, err)
	}
	return ds[0].ID
}

func TestAnOperatorsMessagesReachTheTelegramChatAndTheSlackThread(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		w.deskBot(t)
		w.secret(t, "TELEGRAM_TOKEN", w.telegram.token)
		w.secret(t, "SLACK_BOT_TOKEN", w.slack.token)
		w.secret(t, "SLACK_SIGNING_SECRET", slackSigningSecret)
		c := w.client()
		handoff := llmtest.Calls(llmtest.Call("h1", "handoff_to_human", `{"reason":"asks for a person"}`))

		t.Run("telegram: the operator's reply goes to the chat with sendMessage", func(t *testing.T) {
			ch, err := c.CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "telegram", Bot: "desk",
				Secrets: map[string]string{"bot_token": "TELEGRAM_TOKEN"}})
			if err != nil {
				t.Fatal(err)
			}
			w.llm.Add(handoff)
			w.post(t, ch.ID, http.Header{"X-Telegram-Bot-Api-Secret-Token": {ch.Secret}}, telegramUpdate(2001, 5151, 88, false, "a person please"))
			w.settle(t)
			before := len(w.telegram.messages())
			d := w.handedOffDialog(t)
			if _, err := c.PostOperatorMessage(ctx, "shop", d, "Hi, Ann here. Let me look at your order."); err != nil {
				t.Fatal(err)
			}
			w.settle(t)
			sent := w.telegram.messages()[before:]
			if len(sent) != 1 || sent[0] != (tgSent{ChatID: "5151", Text: "Hi, Ann here. Let me look at your order."}) {
				t.Fatalf("sent %+v, want the operator's message once in chat 5151", sent)
			}
			if err := c.Do(ctx, "POST", "/v1/tenants/shop/dialogs/"+d+"/close", map[string]string{"reason": "done"}, nil); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("slack: the operator's reply goes to the thread with chat.postMessage", func(t *testing.T) {
			ch, err := c.CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "slack", Bot: "desk",
				Secrets: map[string]string{"bot_token": "SLACK_BOT_TOKEN", "signing_secret": "SLACK_SIGNING_SECRET"}})
			if err != nil {
				t.Fatal(err)
			}
			w.llm.Add(handoff)
			body := slackEvent("EvOp1", map[string]any{"user": "U7", "text": "a person please", "channel": "C9", "ts": "1700000009.000100"})
			w.post(t, ch.ID, slackHeaders(slackSigningSecret, time.Now(), body), body)
			w.settle(t)
			before := len(w.slack.messages())
			d := w.handedOffDialog(t)
			if _, err := c.PostOperatorMessage(ctx, "shop", d, "Ann here, in your thread."); err != nil {
				t.Fatal(err)
			}
			w.settle(t)
			got := w.slack.messages()[before:]
			if len(got) != 1 || got[0] != (slackPost{Channel: "C9", ThreadTS: "1700000009.000100", Text: "Ann here, in your thread."}) {
				t.Fatalf("posted %+v, want the operator's message once in thread C9/1700000009.000100", got)
			}
		})
	})
}
