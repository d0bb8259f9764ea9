package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// followed is a dialog's live stream read in the background.
type followed struct {
	events chan apiclient.Event
	stop   context.CancelFunc
}

// follow opens the dialog's live stream with token, from Origin when one
// is given (a widget's pk_ key), resuming after seq after.
func (e *chatEnv) follow(t *testing.T, token, origin, dialogID string, after int64) *followed {
	t.Helper()
	return e.listen(t, token, origin, "/v1/tenants/shop/dialogs/"+dialogID+"/events", after)
}

// widgetDialog starts a dialog as the widget on origin does: its
// anonymous visitor is the one its pk_ key may follow.
func (e *chatEnv) widgetDialog(t *testing.T, pk, origin string) string {
	t.Helper()
	r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", pk, `{}`, "Origin", origin)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
	}
	var d apiclient.Dialog
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// listen opens the event stream of a GET route.
func (e *chatEnv) listen(t *testing.T, token, origin, path string, after int64) *followed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("follow: status %d", resp.StatusCode)
	}
	f := &followed{events: make(chan apiclient.Event, 64), stop: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(f.events)
		var ev apiclient.Event
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && ev.Type != "":
				f.events <- ev
				ev = apiclient.Event{}
			case strings.HasPrefix(line, "event: "):
				ev.Type = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.Data = json.RawMessage(line[len("data: "):])
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[len("id: "):]
			}
		}
	}()
	t.Cleanup(cancel)
	return f
}

// next waits for the stream's next event of type typ, skipping others.
func (f *followed) next(t *testing.T, typ string) apiclient.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-f.events:
			if !ok {
				t.Fatalf("the stream ended before a %s event", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within 30s", typ)
		}
	}
}

func inboxOf(t *testing.T, ev apiclient.Event) apiclient.Inbox {
	t.Helper()
	var in apiclient.Inbox
	if err := json.Unmarshal(ev.Data, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func handoffStatus(t *testing.T, ev apiclient.Event) apiclient.HandoffEvent {
	t.Helper()
	var h apiclient.HandoffEvent
	if err := json.Unmarshal(ev.Data, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHumanHandoff plays a handoff through the API: the bot hands off,
// the visitor's widget stream says so, two operators race for the
// dialog, the winner replies (the visitor sees it live), hands back, and
// the bot's next answer sees what the operator said as the user side's
// note, never as its own words.
func TestHumanHandoff(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		pk, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "shop", platform.APIKeyInput{Name: "site", Kind: "pk", Bot: "helper",
			Origins: []string{"https://shop.example"}})
		if err != nil {
			t.Fatal(err)
		}
		second, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "shop", platform.APIKeyInput{Name: "bob", Scopes: []string{"admin"}})
		if err != nil {
			t.Fatal(err)
		}
		ada, bob := e.key, second.Key
		d := e.widgetDialog(t, pk.Key, "https://shop.example")
		visitor := e.follow(t, pk.Key, "https://shop.example", d, 0)
		inbox := e.listen(t, ada, "", "/v1/tenants/shop/inbox", 0)
		if in := inboxOf(t, inbox.next(t, "inbox")); in.Waiting != 0 || len(in.Dialogs) != 0 {
			t.Fatalf("inbox before the handoff %+v", in)
		}
		if h := handoffStatus(t, visitor.next(t, "handoff")); h.Status != "active" {
			t.Fatalf("first status %+v", h)
		}

		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asks for a person"}`}}})
		turn, err := e.client(e.key).SendMessage(ctx, "shop", d, "I want to talk to a person")
		if err != nil || turn.Done == nil || turn.Done.StopReason != "handoff" {
			t.Fatalf("turn %+v, %v", turn, err)
		}
		t.Run("the visitor's stream says the dialog waits for a person", func(t *testing.T) {
			if h := handoffStatus(t, visitor.next(t, "handoff")); h.Status != "handoff" || h.Operator != "" {
				t.Fatalf("status %+v", h)
			}
		})
		t.Run("an open inbox shows the dialog waiting without a reload", func(t *testing.T) {
			if in := inboxOf(t, inbox.next(t, "inbox")); in.Waiting != 1 || len(in.Dialogs) != 1 || in.Dialogs[0].Dialog.ID != d {
				t.Fatalf("live inbox %+v", in)
			}
		})
		t.Run("the inbox lists the dialog as waiting", func(t *testing.T) {
			in, err := e.client(ada).Inbox(ctx, "shop")
			if err != nil || len(in.Dialogs) != 1 || in.Dialogs[0].Dialog.ID != d || in.Waiting != 1 || in.Taken != 0 {
				t.Fatalf("inbox %+v, %v", in, err)
			}
		})

		var winner, loser string
		t.Run("of two operators taking the dialog at once exactly one gets it, the other 409", func(t *testing.T) {
			var wg sync.WaitGroup
			errs := map[string]error{}
			var mu sync.Mutex
			for name, key := range map[string]string{"Ada": ada, "Bob": bob} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := e.client(key).Assign(ctx, "shop", d, name)
					mu.Lock()
					errs[key] = err
					mu.Unlock()
				}()
			}
			wg.Wait()
			for key, err := range errs {
				var apiErr *apiclient.Error
				switch {
				case err == nil && winner == "":
					winner = key
				case errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict:
					loser = key
				default:
					t.Fatalf("assign: %v", err)
				}
			}
			if winner == "" || loser == "" {
				t.Fatalf("winner %q loser %q", winner, loser)
			}
		})
		name := map[string]string{ada: "Ada", bob: "Bob"}[winner]
		t.Run("the visitor's stream names the operator who took it", func(t *testing.T) {
			if h := handoffStatus(t, visitor.next(t, "handoff")); h.Status != "handoff" || h.Operator != name {
				t.Fatalf("status %+v", h)
			}
		})
		t.Run("only the operator who holds the dialog replies", func(t *testing.T) {
			var apiErr *apiclient.Error
			if _, err := e.client(loser).PostOperatorMessage(ctx, "shop", d, "me too"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict {
				t.Fatalf("loser's reply: %v", err)
			}
		})
		var opSeq int64
		t.Run("the visitor sees the operator's reply as it is posted", func(t *testing.T) {
			m, err := e.client(winner).PostOperatorMessage(ctx, "shop", d, "Hello, I can refund that order for you.")
			if err != nil || m.Kind != "operator" || m.Role != "operator" || m.Author != name {
				t.Fatalf("posted %+v, %v", m, err)
			}
			ev := visitor.next(t, "operator_message")
			var got apiclient.OperatorMessageEvent
			if err := json.Unmarshal(ev.Data, &got); err != nil || got.Message.Text != m.Text || got.Message.Author != name || ev.ID != strconv.FormatInt(m.Seq, 10) {
				t.Fatalf("event %s %s, %v", ev.ID, ev.Data, err)
			}
			opSeq = m.Seq
		})
		t.Run("the visitor's messages meanwhile are stored for the operator, unanswered", func(t *testing.T) {
			turn, err := e.client(e.key).SendMessage(ctx, "shop", d, "Great, thanks!")
			if err != nil || turn.Done == nil || turn.Done.StopReason != "handoff" || e.llm.Pending() != 0 {
				t.Fatalf("turn %+v, %v", turn, err)
			}
		})
		t.Run("releasing gives the dialog back to the bot, and the stream says so", func(t *testing.T) {
			if _, err := e.client(winner).Release(ctx, "shop", d); err != nil {
				t.Fatal(err)
			}
			if h := handoffStatus(t, visitor.next(t, "handoff")); h.Status != "active" {
				t.Fatalf("status %+v", h)
			}
			in, err := e.client(ada).Inbox(ctx, "shop")
			if err != nil || len(in.Dialogs) != 0 {
				t.Fatalf("inbox %+v, %v", in, err)
			}
		})
		t.Run("the bot answers again and reads the operator's words on the user's side", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "Anything else I can do?"})
			turn, err := e.client(e.key).SendMessage(ctx, "shop", d, "One more question")
			if err != nil || turn.Done == nil || turn.Done.StopReason != "completed" {
				t.Fatalf("turn %+v, %v", turn, err)
			}
			var note bool
			for _, m := range e.llm.LastRequest().Messages {
				said := strings.Contains(string(m.Content), "I can refund that order")
				if said && m.Role != "user" {
					t.Fatalf("the operator's words reached the model as %s: %s", m.Role, m.Content)
				}
				note = note || (said && strings.Contains(string(m.Content), name))
			}
			if !note {
				t.Fatalf("the model never saw the operator's reply: %+v", e.llm.LastRequest().Messages)
			}
		})
		t.Run("a stream resumed after the operator's message starts after it", func(t *testing.T) {
			resumed := e.follow(t, pk.Key, "https://shop.example", d, opSeq)
			ev := resumed.next(t, "message")
			var got apiclient.MessageEvent
			if err := json.Unmarshal(ev.Data, &got); err != nil || got.Message.Seq <= opSeq || got.Message.Text != "Great, thanks!" {
				t.Fatalf("first resumed message %s", ev.Data)
			}
		})
	})
}

// TestLiveStreamsHearOtherServers follows a dialog on one server while
// the bot answers it on another sharing the PostgreSQL database, then
// hands it off and an operator answers. The following server re-reads
// on its own only every minute (the stream's mark renewal; its re-check is
// an hour), longer than the test, so only the notifications can bring the
// messages: the bot's reply's, sent because
// the stream marked the dialog followed, and the operator's.
func TestLiveStreamsHearOtherServers(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("set PARLEY_TEST_DATABASE_URL: servers share live signals only through PostgreSQL")
	}
	st1, st2 := storetest.OpenPostgresTwice(t, url)
	e := newChatEnv(t, st1, dialog.Limits{})
	e.liveRecheck = time.Hour
	other, _ := e.serve(t, st2)
	d := e.dialog(t)
	// The helpdesk's side: apiclient follows the dialog on the other server.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	heard := make(chan apiclient.Event, 16)
	go func() {
		_ = other.client(e.key).FollowDialog(ctx, "shop", d, 0, func(ev apiclient.Event) error {
			heard <- ev
			return nil
		})
		close(heard)
	}()
	live := &followed{events: heard, stop: cancel}
	if h := handoffStatus(t, live.next(t, "handoff")); h.Status != "active" {
		t.Fatalf("status %+v", h)
	}
	e.llm.Enqueue(llmtest.ServerReply{Text: "Happy to help"})
	if _, err := e.client(e.key).SendMessage(context.Background(), "shop", d, "hello"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello", "Happy to help"} {
		if ev := live.next(t, "message"); !strings.Contains(string(ev.Data), want) {
			t.Fatalf("wanted %q, got %s", want, ev.Data)
		}
	}
	e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked"}`}}})
	if _, err := e.client(e.key).SendMessage(context.Background(), "shop", d, "a person please"); err != nil {
		t.Fatal(err)
	}
	if h := handoffStatus(t, live.next(t, "handoff")); h.Status != "handoff" {
		t.Fatalf("status %+v", h)
	}
	m, err := e.client(e.key).PostOperatorMessage(context.Background(), "shop", d, "Hello from the other server")
	if err != nil {
		t.Fatal(err)
	}
	if ev := live.next(t, "operator_message"); !strings.Contains(string(ev.Data), "Hello from the other server") || ev.ID != strconv.FormatInt(m.Seq, 10) {
		t.Fatalf("event %s %s", ev.ID, ev.Data)
	}
}
