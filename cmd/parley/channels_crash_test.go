package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// chatPlatform is a local Telegram Bot API (POST /bot<token>/sendMessage)
// and Slack Web API (POST /chat.postMessage, Bearer token) in one server,
// answering as the platforms document. It can stall one request: take it
// and never answer it nor act on it, as a platform behind a broken network
// would, until its caller goes away.
type chatPlatform struct {
	srv *httptest.Server

	mu      sync.Mutex
	sent    []string      // "chat:text" (Telegram) or "channel/thread:text" (Slack)
	stalled chan struct{} // the next request stalls, and closes it
}

const (
	crashTelegramToken = "555:crash-test-token"
	crashSlackToken    = "xoxb-crash-test-token"
	crashSlackSigning  = "crash-test-signing-secret"
)

func newChatPlatform(t *testing.T) *chatPlatform {
	p := &chatPlatform{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ChatID   json.Number `json:"chat_id"`
			Channel  string      `json:"channel"`
			ThreadTS string      `json:"thread_ts"`
			Text     string      `json:"text"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		_, _ = io.Copy(io.Discard, r.Body) // read to the end, so the context ends when the caller goes away
		p.mu.Lock()
		stalled := p.stalled
		p.stalled = nil
		p.mu.Unlock()
		if stalled != nil {
			close(stalled)
			<-r.Context().Done()        // the caller went away (killed) or the platform closed
			panic(http.ErrAbortHandler) // no answer, as over a broken network
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/bot"+crashTelegramToken+"/sendMessage":
			p.record(string(body.ChatID) + ":" + body.Text)
			_, _ = w.Write([]byte(`{"ok":true,"result":{"message_id":1}}`))
		case r.URL.Path == "/chat.postMessage" && r.Header.Get("Authorization") == "Bearer "+crashSlackToken:
			p.record(body.Channel + "/" + body.ThreadTS + ":" + body.Text)
			_, _ = w.Write([]byte(`{"ok":true,"ts":"1700000000.000900"}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":401,"description":"Unauthorized","error":"invalid_auth"}`))
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *chatPlatform) record(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, s)
}

// stallNext makes the platform stall the next request it gets; the
// returned channel closes when that request arrives. The requests after
// it are answered: a server that takes over from the stalled request's
// caller may reach the platform as soon as that caller is dead, before
// the test goes on.
func (p *chatPlatform) stallNext() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = make(chan struct{})
	return p.stalled
}

func (p *chatPlatform) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

// waitSent waits until the platform got want, and a moment more for a
// duplicate, which would come with it if at all.
func (p *chatPlatform) waitSent(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !slices.Contains(p.messages(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the platform got %q, never %q", p.messages(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	n := 0
	for _, m := range p.messages() {
		if m == want {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the platform got %q %d times: %q", want, n, p.messages())
	}
}

// setupChannels creates the tenant, the published bot echo, and a
// Telegram and a Slack channel for it; it returns the admin key and the
// two channels.
func setupChannels(t *testing.T, base string) (key string, telegram, slack *apiclient.NewChannel) {
	t.Helper()
	ctx := context.Background()
	key, _ = setupDialog(t, base)
	admin := apiclient.New(base, key)
	for name, value := range map[string]string{"TG": crashTelegramToken, "SLACK_TOKEN": crashSlackToken, "SLACK_SIGNING": crashSlackSigning} {
		if _, err := admin.PutSecret(ctx, "acme", name, value); err != nil {
			t.Fatal(err)
		}
	}
	telegram, err := admin.CreateChannel(ctx, "acme", apiclient.CreateChannelRequest{Kind: "telegram", Bot: "echo",
		Secrets: map[string]string{"bot_token": "TG"}})
	if err != nil {
		t.Fatal(err)
	}
	slack, err = admin.CreateChannel(ctx, "acme", apiclient.CreateChannelRequest{Kind: "slack", Bot: "echo",
		Secrets: map[string]string{"bot_token": "SLACK_TOKEN", "signing_secret": "SLACK_SIGNING"}})
	if err != nil {
		t.Fatal(err)
	}
	return key, telegram, slack
}

// deliver posts a platform's request to a channel's inbound route and
// wants it acknowledged.
func deliver(t *testing.T, base, channelID string, h http.Header, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+platform.InboundPath(channelID), strings.NewReader(body))
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the platform's request was answered %d, want 200", resp.StatusCode)
	}
}

// userTexts returns the texts of the user messages the tenant's dialogs
// hold.
func userTexts(t *testing.T, base, key string) []string {
	t.Helper()
	list, err := apiclient.New(base, key).ListDialogs(context.Background(), "acme", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range list.Dialogs {
		for _, m := range dialogMessages(t, base, key, d.ID) {
			if text, ok := strings.CutPrefix(m, "user:complete:"); ok {
				out = append(out, text)
			}
		}
	}
	return out
}

// killAndTakeOver kills p with SIGKILL, then calls then, and returns the
// server that takes over: on SQLite p restarted on its data dir; on
// PostgreSQL another instance, started before the kill and running
// beside p until then.
func killAndTakeOver(t *testing.T, p *process, bin program, env parleyEnv, then func()) *process {
	t.Helper()
	if env["PARLEY_DATABASE_URL"] == "" {
		p.kill()
		then()
		return p.restart(t)
	}
	other := startProcess(t, bin, env)
	p.kill()
	then()
	return other
}

// TestSIGKILLAfterTheAcknowledgementLosesNoChannelMessage kills the real
// program after it acknowledged a platform's message and before the reply
// went out: once while the model answers a Telegram message, once while
// Slack takes the reply to a Slack message. The server that takes over
// (the program restarted on SQLite, another instance already running on
// PostgreSQL) sends each reply once, and each user message is stored once.
func TestSIGKILLAfterTheAcknowledgementLosesNoChannelMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills servers")
	}
	t.Parallel()
	bin := parleyBinary(t)
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		var (
			mu       sync.Mutex
			hold     = make(chan struct{}) // the model answers a "hold" text once this closes
			answered = make(chan struct{}) // closed when the model got its first "hold" text
		)
		chatServer(t, env, llmtest.Options{Handler: func(req *llmtest.ChatRequest) llmtest.ServerReply {
			text := req.LastUserText()
			if strings.HasPrefix(text, "hold") {
				mu.Lock()
				select {
				case <-answered:
				default:
					close(answered)
				}
				mu.Unlock()
				<-hold
			}
			return llmtest.ServerReply{Text: "re: " + text}
		}})
		chat := newChatPlatform(t)
		u, _ := url.Parse(chat.srv.URL)
		env["PARLEY_TELEGRAM_API_URL"], env["PARLEY_SLACK_API_URL"] = chat.srv.URL, chat.srv.URL
		env["PARLEY_OUTBOUND_ALLOW"], env["PARLEY_OUTBOUND_PORTS"] = "127.0.0.1/32", u.Port()
		p := startProcess(t, bin, env)
		key, telegram, slack := setupChannels(t, p.URL)

		// Killed while the model answers a Telegram message. (No subtests:
		// a process started in one would be killed when it ends.)
		{
			update := `{"update_id": 9001, "message": {"message_id": 1, "date": 1700000000, "text": "hold on, where is my order?",
				"chat": {"id": 4242, "type": "private"}, "from": {"id": 77, "is_bot": false, "first_name": "Ann"}}}`
			deliver(t, p.URL, telegram.ID, http.Header{channel.TelegramSecretHeader: {telegram.Secret}}, update)
			select {
			case <-answered:
			case <-time.After(time.Minute):
				t.Fatal("the model was never asked")
			}
			p = killAndTakeOver(t, p, bin, env, func() { close(hold) }) // the next model call answers at once
			chat.waitSent(t, "4242:re: hold on, where is my order?")
			if got := userTexts(t, p.URL, key); len(got) != 1 || got[0] != "hold on, where is my order?" {
				t.Fatalf("user messages %q, want the one text once", got)
			}
		}

		// Killed while Slack takes the reply to a Slack message.
		{
			stalled := chat.stallNext()
			body := `{"type": "event_callback", "event_id": "EvCrash1", "team_id": "T1", "event": {"type": "message", "user": "U1",
				"text": "a question from slack", "channel": "C1", "ts": "1700000001.000100"}}`
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			h := http.Header{channel.SlackTimestampHeader: {ts}, channel.SlackSignatureHeader: {channel.SlackSignature(crashSlackSigning, ts, []byte(body))}}
			deliver(t, p.URL, slack.ID, h, body)
			select {
			case <-stalled:
			case <-time.After(time.Minute):
				t.Fatal("the reply never reached Slack")
			}
			p = killAndTakeOver(t, p, bin, env, func() {}) // the stalled request dies with its caller
			chat.waitSent(t, "C1/1700000001.000100:re: a question from slack")
			if got := userTexts(t, p.URL, key); len(got) != 2 || !slices.Contains(got, "a question from slack") {
				t.Fatalf("user messages %q, want the Slack text once besides the Telegram one", got)
			}
		}
	})
}
