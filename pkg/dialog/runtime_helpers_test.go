package dialog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
)

// shopSecret is the tenant secret the HTTP tools send; it must never show
// up in stored messages or events.
const shopSecret = "shop-secret-value-42"

// rtEnv is a Service and a Runtime over a real store, with the strict fake
// LLM behind the real OpenAI provider and a real HTTP shop the tools call.
type rtEnv struct {
	*env
	rt       *dialog.Runtime
	llm      *llmtest.Server
	shop     *httptest.Server
	shopSeen *seen
	tenant   platform.Tenant
	admin    *platform.Principal
	bot      platform.Bot
}

// seen records requests the shop received.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) add(r string) { s.mu.Lock(); s.reqs = append(s.reqs, r); s.mu.Unlock() }

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// shopConfig is a bot with two HTTP tools, a client tool, a tool that needs
// confirmation, the handoff tool and two context variables.
func shopConfig(shopURL string) string {
	return `{
  "basic_settings": {"name": "Shop", "greeting": "Hello!"},
  "tools": [
    {"name": "lookup_order", "description": "Look up an order",
     "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
     "endpoint": {"url": "` + shopURL + `/orders/<order>", "method": "GET",
       "headers": {"Authorization": "Bearer {{secrets.shop_token}}", "X-Tier": "{{tier}}"}}},
    {"name": "check_stock", "description": "Check stock of an item",
     "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
     "endpoint": {"url": "` + shopURL + `/stock/<item>", "method": "GET"}},
    {"name": "cancel_order", "description": "Cancel an order",
     "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
     "endpoint": {"url": "` + shopURL + `/orders/<order>/cancel", "method": "POST"},
     "requires_confirmation": true},
    {"name": "locate", "description": "Ask the browser where the user is", "execution": "client",
     "parameters": {"type": "object", "properties": {}}}
  ],
  "native_tools": ["handoff_to_human", "remember", "recall"],
  "context_variables": [
    {"name": "tier", "description": "Customer plan", "required": true, "expose_to_llm": true, "source": "page"},
    {"name": "region", "description": "Customer region"}
  ],
  "llm": {"model": "gpt-4o-mini"},
  "runtime": {"max_turns": 6}
}`
}

func forEachRuntime(t *testing.T, limits dialog.Limits, fn func(t *testing.T, e *rtEnv)) {
	t.Helper()
	forEachBackend(t, func(t *testing.T, base *env) {
		e := &rtEnv{env: base, shopSeen: &seen{}}
		e.shop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.shopSeen.add(r.Method + " " + r.URL.Path + " auth=" + r.Header.Get("Authorization") + " tier=" + r.Header.Get("X-Tier"))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"path": %q, "ok": true}`, r.URL.Path)
		}))
		t.Cleanup(e.shop.Close)
		e.llm = llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test", FragmentSize: 4})
		provider := e.rtProvider(t)
		policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{portOf(t, e.shop.URL)})
		if err != nil {
			t.Fatal(err)
		}
		e.rt = e.runtime(t, dialog.Options{Provider: provider, DefaultModel: "gpt-4o-mini",
			HTTPClient: outbound.NewClient(policy, outbound.Options{}), Limits: limits})
		e.tenant, e.admin = e.tenantWithKey(t, "shop")
		if _, err := e.svc.Secrets().Put(ctx, e.admin, "shop", "shop_token", shopSecret); err != nil {
			t.Fatal(err)
		}
		e.bot, _, err = e.svc.Bots().Create(ctx, e.admin, "shop", "helper", []byte(shopConfig(e.shop.URL)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, e.admin, "shop", "helper", 1); err != nil {
			t.Fatal(err)
		}
		fn(t, e)
	})
}

func portOf(t *testing.T, raw string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dialog starts a dialog as the tenant's admin key with the required
// context.
func (e *rtEnv) dialog(t *testing.T) dialog.Dialog {
	t.Helper()
	d, err := e.rt.Dialogs().Create(ctx, e.admin, "shop", "helper", dialog.CreateDialogInput{UserID: "u1",
		Context: map[string]string{"tier": "gold"}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// events is a sink that keeps every event, in order.
type events struct {
	mu  sync.Mutex
	all []agent.Event
}

func (s *events) Send(e agent.Event) { s.mu.Lock(); s.all = append(s.all, e); s.mu.Unlock() }

// types lists the event types, space-separated, with a run of text_delta
// events written once as "text_delta…": how a text is fragmented is the
// provider's business.
func (s *events) types() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.all {
		typ := e.Type()
		if typ == "text_delta" {
			if len(out) > 0 && out[len(out)-1] == "text_delta…" {
				continue
			}
			typ = "text_delta…"
		}
		out = append(out, typ)
	}
	return strings.Join(out, " ")
}

// json is every event as its JSON, one per line.
func (s *events) json(t *testing.T) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, e := range s.all {
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// history returns the dialog's stored messages as "kind:status:text".
func (e *rtEnv) history(t *testing.T, dialogID string) []string {
	t.Helper()
	d, err := e.rt.Dialogs().Get(ctx, e.admin, "shop", dialogID, "")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(d.Messages))
	for i, m := range d.Messages {
		out[i] = m.Kind + ":" + m.Status + ":" + m.Text
	}
	return out
}

// rtProvider is the real OpenAI provider pointed at the fake server.
func (e *rtEnv) rtProvider(t *testing.T) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{BaseURL: e.llm.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sendSlowly sends text as p to the dialog, with the model taking 300 ms
// to answer reply, and returns once the model has been asked, with the
// request's outcome to come.
func (e *rtEnv) sendSlowly(p *platform.Principal, dialogID, text, reply string) <-chan error {
	e.llm.Enqueue(llmtest.ServerReply{Text: reply, Fault: &llmtest.Fault{Latency: 300 * time.Millisecond}})
	asked := len(e.llm.Requests())
	done := make(chan error, 1)
	go func() {
		_, err := e.rt.SendMessage(context.Background(), p, "shop", dialogID, dialog.SendInput{Text: text}, nil)
		done <- err
	}()
	for len(e.llm.Requests()) == asked {
		time.Sleep(5 * time.Millisecond)
	}
	return done
}

// otherProcess is a second runtime on the same database, as another
// server process would be: it shares no memory with e.rt.
func (e *rtEnv) otherProcess(t *testing.T) *dialog.Runtime {
	t.Helper()
	return e.runtime(t, dialog.Options{Provider: e.rtProvider(t), DefaultModel: "gpt-4o-mini"})
}
