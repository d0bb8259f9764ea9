package inbound_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// telegramUpdate is an Update as the Bot API sends it to a webhook.
func telegramUpdate(updateID, chatID, fromID int64, isBot bool, text string) []byte {
	msg := map[string]any{"message_id": updateID * 10, "date": 1700000000,
		"chat": map[string]any{"id": chatID, "type": "private"},
		"from": map[string]any{"id": fromID, "is_bot": isBot, "first_name": "Ann"}}
	if text != "" {
		msg["text"] = text
	} else {
		msg["sticker"] = map[string]any{"file_id": "CAAC", "emoji": "👍"}
	}
	b, _ := json.Marshal(map[string]any{"update_id": updateID, "message": msg})
	return b
}

func TestATelegramChannelAnswersChatsThroughTheBotAPI(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		w.secret(t, "TELEGRAM_TOKEN", w.telegram.token)
		c := w.client()
		ch, err := c.CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "telegram", Bot: "helper",
			Secrets: map[string]string{"bot_token": "TELEGRAM_TOKEN"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Run("setWebhook points the bot at the inbound URL with the channel's secret token", func(t *testing.T) {
			res, err := c.SetTelegramWebhook(ctx, "shop", ch.ID, apiclient.SetTelegramWebhookRequest{})
			if err != nil {
				t.Fatal(err)
			}
			w.telegram.mu.Lock()
			hooks := append([]tgWebhook(nil), w.telegram.hooks...)
			w.telegram.mu.Unlock()
			if len(hooks) != 1 || hooks[0].URL != ch.InboundURL || res.URL != ch.InboundURL || hooks[0].SecretToken != ch.Secret || ch.Secret == "" {
				t.Fatalf("setWebhook calls %+v (answer %+v), want the inbound URL %s with the secret token", hooks, res, ch.InboundURL)
			}
		})
		long := strings.Repeat("Parley splits long replies at line breaks.\n", 120) // 5,160 characters
		w.llm.Add(llmtest.Text("Hello from Parley"), llmtest.Text(long))
		withSecret := http.Header{"X-Telegram-Bot-Api-Secret-Token": {ch.Secret}}
		t.Run("a text message is answered with sendMessage in its chat", func(t *testing.T) {
			resp, body := w.post(t, ch.ID, withSecret, telegramUpdate(1001, 4242, 77, false, "hi"))
			w.settle(t)
			sent := w.telegram.messages()
			if resp.StatusCode != http.StatusOK || len(sent) != 1 || sent[0].ChatID != "4242" || sent[0].Text != "Hello from Parley" {
				t.Fatalf("answered %d %s; sent %+v", resp.StatusCode, body, sent)
			}
			ds := w.dialogs(t)
			if len(ds) != 1 || ds[0].UserID != "77" || ds[0].Channel != "telegram" {
				t.Fatalf("dialogs %+v, want one of user 77 from telegram", ds)
			}
		})
		t.Run("a retried update_id is acknowledged and never answered twice", func(t *testing.T) {
			resp, _ := w.post(t, ch.ID, withSecret, telegramUpdate(1001, 4242, 77, false, "hi"))
			w.settle(t)
			if resp.StatusCode != http.StatusOK || len(w.telegram.messages()) != 1 || len(w.llm.Requests()) != 1 {
				t.Fatalf("answered %d; %d sent, %d model calls", resp.StatusCode, len(w.telegram.messages()), len(w.llm.Requests()))
			}
		})
		t.Run("a reply longer than 4096 characters goes out in parts that fit", func(t *testing.T) {
			w.post(t, ch.ID, withSecret, telegramUpdate(1002, 4242, 77, false, "tell me more"))
			w.settle(t)
			sent := w.telegram.messages()[1:]
			var joined []string
			for _, m := range sent {
				if utf8.RuneCountInString(m.Text) > 4096 || m.ChatID != "4242" {
					t.Fatalf("a part of %d characters to %s", utf8.RuneCountInString(m.Text), m.ChatID)
				}
				joined = append(joined, m.Text)
			}
			if len(sent) != 2 || strings.Join(joined, "\n") != strings.TrimSpace(long) {
				t.Fatalf("%d parts, want the reply in 2 that join to it", len(sent))
			}
			if len(w.dialogs(t)) != 1 {
				t.Fatal("the chat's second message started another dialog")
			}
		})
		for _, tc := range []struct {
			name   string
			header http.Header
			update []byte
			want   int
		}{
			{"an update without the secret token is refused", http.Header{}, telegramUpdate(1003, 4242, 77, false, "hi"), http.StatusUnauthorized},
			{"an update with a wrong secret token is refused", http.Header{"X-Telegram-Bot-Api-Secret-Token": {"guess"}}, telegramUpdate(1004, 4242, 77, false, "hi"), http.StatusUnauthorized},
			{"a sticker is acknowledged and ignored", withSecret, telegramUpdate(1005, 4242, 77, false, ""), http.StatusOK},
			{"another bot's message is acknowledged and ignored", withSecret, telegramUpdate(1006, 4242, 99, true, "beep"), http.StatusOK},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := w.userMessages(t)
				resp, body := w.post(t, ch.ID, tc.header, tc.update)
				w.settle(t)
				if resp.StatusCode != tc.want || w.userMessages(t) != before || len(w.telegram.messages()) != 3 {
					t.Fatalf("answered %d %s, want %d and nothing stored or sent", resp.StatusCode, body, tc.want)
				}
			})
		}
	})
}

func TestAReplyTheBotAPIRefusesIsLoggedAndCountedWithoutTheToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t, openSQLite(t))
	const wrongToken = "987654:WRONG-token-that-must-never-be-logged"
	w.secret(t, "TELEGRAM_TOKEN", wrongToken)
	ch, err := w.client().CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "telegram", Bot: "helper",
		Secrets: map[string]string{"bot_token": "TELEGRAM_TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	w.llm.Add(llmtest.Text("Hello"))
	resp, _ := w.post(t, ch.ID, http.Header{"X-Telegram-Bot-Api-Secret-Token": {ch.Secret}}, telegramUpdate(5, 4242, 77, false, "hi"))
	w.settle(t)
	if resp.StatusCode != http.StatusOK || len(w.telegram.messages()) != 0 {
		t.Fatalf("answered %d, sent %d", resp.StatusCode, len(w.telegram.messages()))
	}
	logs := w.logs.String()
	if !strings.Contains(logs, "reply not delivered") || !strings.Contains(logs, "Unauthorized") {
		t.Fatalf("logs do not say the reply failed and why:\n%s", logs)
	}
	if strings.Contains(logs, wrongToken) || strings.Contains(logs, "987654") {
		t.Fatalf("logs hold the bot token:\n%s", logs)
	}
	metrics := scrape(t, w)
	for _, want := range []string{`parley_channel_reply_failures_total{kind="telegram"} 1`, `parley_channel_messages_total{kind="telegram",outcome="accepted"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("metrics lack %s:\n%s", want, metrics)
		}
	}
}

func TestAReplyTheBotAPIThrottlesIsSentOnceWhenItTakesItAgain(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		w.secret(t, "TELEGRAM_TOKEN", w.telegram.token)
		ch, err := w.client().CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "telegram", Bot: "helper",
			Secrets: map[string]string{"bot_token": "TELEGRAM_TOKEN"}})
		if err != nil {
			t.Fatal(err)
		}
		w.telegram.mu.Lock()
		w.telegram.throttle = 1
		w.telegram.mu.Unlock()
		w.llm.Add(llmtest.Text("Hello after a pause"))
		w.post(t, ch.ID, http.Header{"X-Telegram-Bot-Api-Secret-Token": {ch.Secret}}, telegramUpdate(7001, 4242, 77, false, "hi"))
		deadline := time.Now().Add(30 * time.Second)
		for len(w.telegram.messages()) == 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		w.settle(t)
		if sent := w.telegram.messages(); len(sent) != 1 || sent[0].Text != "Hello after a pause" || len(w.llm.Requests()) != 1 {
			t.Fatalf("sent %+v after %d model calls; want the reply once, answered once", sent, len(w.llm.Requests()))
		}
		if m := scrape(t, w); !strings.Contains(m, `parley_channel_retries_total{kind="telegram"} 1`) {
			t.Fatalf("metrics lack the retry:\n%s", m)
		}
	})
}
