package inbound_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

const slackSigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// slackEvent is an Events API event_callback with a message event, as
// Slack sends it.
func slackEvent(eventID string, event map[string]any) []byte {
	event["type"] = "message"
	b, _ := json.Marshal(map[string]any{"token": "legacy", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
		"event_id": eventID, "event_time": 1700000000, "event": event,
		"authorizations": []map[string]any{{"team_id": "T1", "user_id": "UBOT", "is_bot": true}}})
	return b
}

// slackHeaders signs body as Slack does, with timestamp at.
func slackHeaders(secret string, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	return http.Header{channel.SlackTimestampHeader: {ts}, channel.SlackSignatureHeader: {channel.SlackSignature(secret, ts, body)}}
}

func (w *world) slackChannel(t *testing.T) *apiclient.NewChannel {
	t.Helper()
	w.secret(t, "SLACK_BOT_TOKEN", w.slack.token)
	w.secret(t, "SLACK_SIGNING_SECRET", slackSigningSecret)
	ch, err := w.client().CreateChannel(ctx, "shop", apiclient.CreateChannelRequest{Kind: "slack", Bot: "helper",
		Secrets: map[string]string{"bot_token": "SLACK_BOT_TOKEN", "signing_secret": "SLACK_SIGNING_SECRET"}})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestASlackChannelAnswersInThreadsThroughTheWebAPI(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, w *world) {
		ch := w.slackChannel(t)
		now := time.Now()
		post := func(t *testing.T, body []byte, extra http.Header) (*http.Response, []byte) {
			h := slackHeaders(slackSigningSecret, now, body)
			for k, v := range extra {
				h[k] = v
			}
			return w.post(t, ch.ID, h, body)
		}
		t.Run("the URL verification challenge is answered", func(t *testing.T) {
			resp, body := post(t, []byte(`{"token":"legacy","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`), nil)
			if resp.StatusCode != http.StatusOK || string(body) != `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}` {
				t.Fatalf("answered %d %s", resp.StatusCode, body)
			}
		})
		w.llm.Add(llmtest.Text("Hi! How can I help?"), llmtest.Text("Done."))
		t.Run("a top-level message is answered in a thread it starts", func(t *testing.T) {
			resp, _ := post(t, slackEvent("Ev1", map[string]any{"user": "U1", "text": "hello bot", "channel": "C1", "ts": "1700000001.000100"}), nil)
			w.settle(t)
			got := w.slack.messages()
			if resp.StatusCode != http.StatusOK || len(got) != 1 || got[0] != (slackPost{Channel: "C1", ThreadTS: "1700000001.000100", Text: "Hi! How can I help?"}) {
				t.Fatalf("answered %d; posted %+v", resp.StatusCode, got)
			}
		})
		t.Run("Slack's retry of the event is acknowledged and never answered twice", func(t *testing.T) {
			resp, _ := post(t, slackEvent("Ev1", map[string]any{"user": "U1", "text": "hello bot", "channel": "C1", "ts": "1700000001.000100"}),
				http.Header{channel.SlackRetryHeader: {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}})
			w.settle(t)
			if resp.StatusCode != http.StatusOK || len(w.slack.messages()) != 1 || len(w.llm.Requests()) != 1 {
				t.Fatalf("answered %d; %d posted, %d model calls", resp.StatusCode, len(w.slack.messages()), len(w.llm.Requests()))
			}
		})
		t.Run("a reply in the thread continues the thread's dialog", func(t *testing.T) {
			post(t, slackEvent("Ev2", map[string]any{"user": "U1", "text": "reset my password", "channel": "C1",
				"ts": "1700000005.000100", "thread_ts": "1700000001.000100"}), nil)
			w.settle(t)
			got := w.slack.messages()
			if len(got) != 2 || got[1].ThreadTS != "1700000001.000100" || got[1].Text != "Done." || len(w.dialogs(t)) != 1 {
				t.Fatalf("posted %+v with %d dialogs, want the answer in the same thread and dialog", got, len(w.dialogs(t)))
			}
		})
		for _, tc := range []struct {
			name  string
			event map[string]any
		}{
			{"another bot's message is ignored", map[string]any{"bot_id": "B9", "text": "beep", "channel": "C1", "ts": "1700000009.000100"}},
			{"the bot's own message is ignored", map[string]any{"user": "UBOT", "text": "Hi! How can I help?", "channel": "C1", "ts": "1700000010.000100"}},
			{"an edit is ignored", map[string]any{"subtype": "message_changed", "channel": "C1", "ts": "1700000011.000100",
				"message": map[string]any{"user": "U1", "text": "hello bot!"}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := w.userMessages(t)
				resp, _ := post(t, slackEvent("Ev-"+tc.name, tc.event), nil)
				w.settle(t)
				if resp.StatusCode != http.StatusOK || w.userMessages(t) != before || len(w.slack.messages()) != 2 {
					t.Fatalf("answered %d, want 200 and nothing stored or posted", resp.StatusCode)
				}
			})
		}
	})
}

// TestSlacksOfficialSDKAndParleyAgreeOnSignatures asks @slack/bolt's
// isValidSlackRequest, as a Bolt app checks what Slack sends, about a
// request and its tampered variants, and checks Parley accepts exactly
// the ones Bolt accepts.
func TestSlacksOfficialSDKAndParleyAgreeOnSignatures(t *testing.T) {
	t.Parallel()
	mods := npmModules(t, "node-slack", "@slack/bolt", ".ci/install-slack.sh")
	w := newWorld(t, openSQLite(t))
	ch := w.slackChannel(t)
	now := time.Now()
	body := []byte(`{"token":"legacy","challenge":"ch4ll3ng3","type":"url_verification"}`)
	good := slackHeaders(slackSigningSecret, now, body)
	type request struct {
		name      string
		secret    string
		body      string
		signature string
		timestamp string
		accepted  bool
	}
	ts := good.Get(channel.SlackTimestampHeader)
	sig := good.Get(channel.SlackSignatureHeader)
	stale := slackHeaders(slackSigningSecret, now.Add(-6*time.Minute), body)
	cases := []request{
		{"a request signed with the signing secret is accepted", slackSigningSecret, string(body), sig, ts, true},
		{"a body changed after signing is refused", slackSigningSecret, string(body) + " ", sig, ts, false},
		{"a signature made with another secret is refused", slackSigningSecret, string(body),
			slackHeaders("another-secret", now, body).Get(channel.SlackSignatureHeader), ts, false},
		{"a timestamp changed after signing is refused", slackSigningSecret, string(body), sig, strconv.FormatInt(now.Unix()+1, 10), false},
		{"a request older than five minutes is refused", slackSigningSecret, string(body),
			stale.Get(channel.SlackSignatureHeader), stale.Get(channel.SlackTimestampHeader), false},
		{"a v1 signature is refused", slackSigningSecret, string(body), "v1=" + sig[3:], ts, false},
	}
	inputs := make([]any, len(cases))
	for i, c := range cases {
		inputs[i] = map[string]string{"signingSecret": c.secret, "body": c.body, "signature": c.signature, "timestamp": c.timestamp}
	}
	bolt := node(t, mods, "verify_slack.js", inputs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if bolt[i] != strconv.FormatBool(c.accepted) {
				t.Fatalf("@slack/bolt says %s, want %v", bolt[i], c.accepted)
			}
			h := http.Header{channel.SlackSignatureHeader: {c.signature}, channel.SlackTimestampHeader: {c.timestamp}}
			resp, answer := w.post(t, ch.ID, h, []byte(c.body))
			if got := resp.StatusCode == http.StatusOK; got != c.accepted {
				t.Fatalf("Parley answered %d %s; Bolt accepts it: %v", resp.StatusCode, answer, c.accepted)
			}
		})
	}
}
