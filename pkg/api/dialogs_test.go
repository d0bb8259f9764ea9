package api_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// chatEnv is the real API with a dialog runtime: the strict fake LLM behind
// the real OpenAI provider, and a real HTTP shop for the bot's tools.
type chatEnv struct {
	*env
	rt    *dialog.Runtime
	llm   *llmtest.Server
	shop  *httptest.Server
	key   string // tenant shop's admin key
	calls sync.Map
	// serve starts another API server with its own runtime on st, as a
	// second server process sharing the database would be.
	serve   func(t *testing.T, st *store.Store) (*env, *dialog.Runtime)
	sealKey []byte
	// liveRecheck, when set, is the LiveRecheck of the servers serve
	// starts from then on.
	liveRecheck time.Duration
}

const chatSecret = "shop-token-for-the-api-test"

// chatBot has two HTTP tools (check_stock shown to end users), a client
// tool, a confirmed tool and the handoff tool.
func chatBot(shopURL string) string {
	return `{"basic_settings": {"name": "Shop"},
  "tools": [
    {"name": "lookup_order", "description": "Look up an order",
     "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
     "endpoint": {"url": "` + shopURL + `/orders/<order>", "method": "GET",
       "headers": {"Authorization": "Bearer {{secrets.shop_token}}"}}},
    {"name": "check_stock", "description": "Check stock", "show_to_end_user": true,
     "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
     "endpoint": {"url": "` + shopURL + `/stock/<item>", "method": "GET"}},
    {"name": "cancel_order", "description": "Cancel an order", "requires_confirmation": true,
     "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
     "endpoint": {"url": "` + shopURL + `/orders/<order>/cancel", "method": "POST"}},
    {"name": "locate", "description": "Where the user is", "execution": "client",
     "parameters": {"type": "object", "properties": {}}}
  ],
  "native_tools": ["handoff_to_human"],
  "llm": {"model": "gpt-4o-mini"}}`
}

func newChatEnv(t *testing.T, st *store.Store, limits dialog.Limits) *chatEnv {
	t.Helper()
	e := &chatEnv{}
	e.shop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := e.calls.LoadOrStore(r.Method+" "+r.URL.Path, new(int))
		*n.(*int)++
		if r.URL.Path == "/pixel.png" { // an image a user links to (images_test.go)
			w.Write(pixel)
			return
		}
		fmt.Fprintf(w, `{"path": %q, "auth_ok": %v}`, r.URL.Path, r.Header.Get("Authorization") == "Bearer "+chatSecret)
	}))
	t.Cleanup(e.shop.Close)
	e.llm = llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test", FragmentSize: 4})
	provider, err := openai.New(openai.Config{BaseURL: e.llm.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(e.shop.URL)
	port, _ := strconv.Atoi(u.Port())
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port})
	if err != nil {
		t.Fatal(err)
	}
	e.sealKey = make([]byte, auth.KeySize)
	rand.Read(e.sealKey)
	e.serve = func(t *testing.T, st *store.Store) (*env, *dialog.Runtime) {
		t.Helper()
		sealer, _ := auth.NewSealer(e.sealKey)
		logs := &redacttest.Logs{}
		logger := slog.New(slog.NewJSONHandler(logs, nil))
		svc := platformtest.New(t, st, platform.Options{Sealer: sealer, PlatformToken: testPlatformToken,
			Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost}, Logger: logger})
		reg := prometheus.NewRegistry()
		rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "gpt-4o-mini", LiveRecheck: e.liveRecheck,
			HTTPClient: outbound.NewClient(policy, outbound.Options{}), Limits: limits, Metrics: reg, Logger: logger})
		h, err := api.New(api.Options{Platform: svc, Runtime: rt, Metrics: reg, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return &env{svc: svc, srv: srv, h: h, reg: reg, logs: logs}, rt
	}
	e.env, e.rt = e.serve(t, st)
	svc := e.svc
	e.key = e.mustCreateTenant(t, "shop")
	op := platform.Operator()
	if _, err := svc.Secrets().Put(context.Background(), op, "shop", "shop_token", chatSecret); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bots().Create(context.Background(), op, "shop", "helper", []byte(chatBot(e.shop.URL))); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Versions().Publish(context.Background(), op, "shop", "helper", 1); err != nil {
		t.Fatal(err)
	}
	return e
}

// forEachChat runs fn on SQLite, and on PostgreSQL when configured.
func forEachChat(t *testing.T, limits dialog.Limits, fn func(t *testing.T, e *chatEnv)) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { fn(t, newChatEnv(t, st, limits)) })
}

// dialog starts a dialog with the shop's bot and returns its id.
func (e *chatEnv) dialog(t *testing.T) string { return e.dialogWith(t, "helper") }

// dialogWith starts a dialog with the shop's bot named by slug.
func (e *chatEnv) dialogWith(t *testing.T, slug string) string {
	t.Helper()
	r := e.raw(t, "POST", "/v1/tenants/shop/bots/"+slug+"/dialogs", e.key, `{"user_id":"u1"}`)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
	}
	var d apiclient.Dialog
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func (e *chatEnv) shopCalls(call string) int {
	n, ok := e.calls.Load(call)
	if !ok {
		return 0
	}
	return *n.(*int)
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	typ  string
	data map[string]any
}

// readSSE parses a whole event stream.
func readSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	var typ string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev := sseEvent{typ: typ}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
				t.Fatalf("event %s: %v", typ, err)
			}
			if ev.data["type"] != typ {
				t.Fatalf("event %s carries type %v", typ, ev.data["type"])
			}
			out = append(out, ev)
		}
	}
	return out
}

// types lists event types, a run of text_delta written once.
func types(evs []sseEvent) string {
	var out []string
	for _, ev := range evs {
		if ev.typ == "text_delta" && len(out) > 0 && out[len(out)-1] == "text_delta…" {
			continue
		}
		if ev.typ == "text_delta" {
			out = append(out, "text_delta…")
			continue
		}
		out = append(out, ev.typ)
	}
	return strings.Join(out, " ")
}

// A client reads a message with one type whether it arrives in a stream's
// "message" event or in the dialog's history.
func TestAStreamedMessageReadsAsTheDialogHistoryReturnsIt(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		id := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "Hello there."})
		c := e.client(e.key)
		var streamed []apiclient.Message
		err := c.StreamMessage(ctx, "shop", id, "hi", "", func(ev apiclient.Event) error {
			if ev.Type != "message" {
				return nil
			}
			var m apiclient.MessageEvent
			if err := json.Unmarshal(ev.Data, &m); err != nil {
				return err
			}
			streamed = append(streamed, m.Message)
			return nil
		})
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		detail, err := c.GetDialog(ctx, "shop", id)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]apiclient.Message{}
		for _, m := range detail.Messages {
			stored[m.ID] = m
		}
		if len(streamed) < 2 {
			t.Fatalf("the stream carried %d messages; want the user's and the reply", len(streamed))
		}
		for _, got := range streamed {
			want, ok := stored[got.ID]
			if !ok || got.ID == "" {
				t.Fatalf("streamed message %+v is not in the history", got)
			}
			if got.CreatedAt.IsZero() {
				t.Errorf("message %s has no created_at in the stream", got.ID)
			}
			// The stream stamps a reply when it is produced, the history when
			// it is stored; the rest must read alike.
			got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("message reads\n%+v\nin the stream and\n%+v\nin the history", got, want)
			}
		}
	})
}
