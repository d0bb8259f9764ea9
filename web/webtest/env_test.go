package webtest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/web"
)

const chromium = "/usr/bin/chromium"

var screenshots = flag.String("screenshots", "", "write the tests' screenshots (PNG) to this folder")

// waitLimit bounds each wait for the page, so a broken UI fails instead of
// hanging; it is not a speed assertion.
const waitLimit = 15 * time.Second

// botConfig is the bot every test starts from: a greeting, a context
// variable from the visitor's signed token and one the page fills from
// data-context, a client tool the
// page runs, an HTTP tool that needs the visitor's confirmation, and the
// handoff to a person. SHOP
// is replaced with the shop server's URL.
const botConfig = `{
  "basic_settings": {"name": "Acme Support", "greeting": "Hi! I am the Acme assistant."},
  "context_variables": [
    {"name": "customer_tier", "description": "Plan of the customer", "source": "identity", "claim": "tier"},
    {"name": "page_lang", "description": "Language of the page", "source": "page"}
  ],
  "tools": [
    {"name": "locate", "description": "Where the visitor is", "execution": "client",
     "parameters": {"type": "object", "properties": {}}},
    {"name": "cancel_order", "description": "Cancel an order", "requires_confirmation": true,
     "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
     "endpoint": {"url": "SHOP/orders/<order>/cancel", "method": "POST"}}
  ],
  "native_tools": ["handoff_to_human"],
  "llm": {"model": "gpt-4o-mini"}
}`

// world is the real API (platform, runtime, SQLite) with the fake LLM
// behind the real OpenAI provider, a tenant "acme" with a published bot
// "support", and the tenant's admin key.
type world struct {
	st       *store.Store
	svc      *platform.Service
	rt       *dialog.Runtime
	api      *httptest.Server
	adminKey string
	// cancelled counts the shop's cancel calls, made only once a visitor
	// confirms.
	cancelled atomic.Int32
	// cut, while set, closes the connection of every message post without
	// an answer: a network failure as the browser sees it.
	cut atomic.Bool
	// cutSignOut, while set, does the same to every sign-out
	// (POST /v1/auth/logout), so the session is not ended.
	cutSignOut atomic.Bool
	// shopURL is where cancel_order sends its calls.
	shopURL string
	// webhookSet holds the setWebhook calls the fake Telegram Bot API got,
	// as JSON.
	webhookSet chan string
	// asked gets a value when the model is asked a text that starts with
	// "take your time", and holds its answer until the test calls answer:
	// a reply still being written for as long as the test needs.
	asked, held chan struct{}
	// following counts the dialogs' live streams (GET .../events) open.
	following atomic.Int32
}

// Owner credentials of the tenant, for the password sign-in.
const (
	ownerEmail    = "owner@acme.test"
	ownerPassword = "correct horse battery staple"
)

// eachBackend runs fn on SQLite, and on PostgreSQL when
// PARLEY_TEST_DATABASE_URL is set, each with its own world and its own tab
// of the test's browser. It is for what depends on how the database carries
// a change from one connection to another (live streams, handoff, the inbox,
// a reply written while the page reloads), where PostgreSQL has shown races
// that SQLite cannot; the console's pages and forms use onSQLite.
func eachBackend(t *testing.T, fn func(t *testing.T, w *world, ctx context.Context)) {
	t.Helper()
	b := browser(t)
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { fn(t, newWorld(t, st), tab(t, b)) })
}

// onSQLite runs fn once, on SQLite, with its own world and tab. A console
// page or form checks what the browser does with the API; the queries behind
// it are pkg/api's and pkg/store's to test, on both databases, so running it
// twice would double the browser's work, the longest part of make test, for
// no other check (docs/testing.md).
func onSQLite(t *testing.T, fn func(t *testing.T, w *world, ctx context.Context)) {
	t.Helper()
	fn(t, newWorld(t, storetest.OpenSQLite(t)), tab(t, browser(t)))
}

func newWorld(t *testing.T, st *store.Store) *world {
	t.Helper()
	w := &world{}
	shop := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.cancelled.Add(1)
		if strings.HasPrefix(r.URL.Path, "/orders/Z") { // the shop knows no Z orders: a tool call that fails
			http.Error(rw, `{"error": "no such order"}`, http.StatusNotFound)
			return
		}
		fmt.Fprintf(rw, `{"cancelled": %q}`, r.URL.Path)
	}))
	t.Cleanup(shop.Close)
	w.webhookSet = make(chan string, 4)
	telegram := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.HasSuffix(r.URL.Path, "/setWebhook") {
			http.Error(rw, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
			return
		}
		w.webhookSet <- string(body)
		fmt.Fprint(rw, `{"ok":true,"result":true,"description":"Webhook was set"}`)
	}))
	t.Cleanup(telegram.Close)
	w.asked, w.held = make(chan struct{}, 1), make(chan struct{})
	llmSrv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test", FragmentSize: 3, Handler: func(req *llmtest.ChatRequest) llmtest.ServerReply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "user" && strings.HasPrefix(last.Text(), "take your time") {
			select {
			case w.asked <- struct{}{}:
			default:
			}
			<-w.held
		}
		return model(req)
	}})
	provider, err := openai.New(openai.Config{BaseURL: llmSrv.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, auth.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := auth.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	svc := platformtest.New(t, st, platform.Options{Sealer: sealer, Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost}})
	shopURL, _ := url.Parse(shop.URL)
	port, _ := strconv.Atoi(shopURL.Port())
	telegramURL, _ := url.Parse(telegram.URL)
	telegramPort, _ := strconv.Atoi(telegramURL.Port())
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port, telegramPort})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "gpt-4o-mini", Metrics: reg,
		HTTPClient: outbound.NewClient(policy, outbound.Options{})})
	channels, err := inbound.New(inbound.Options{Platform: svc, Runtime: rt, Store: st, Client: outbound.NewClient(policy, outbound.Options{}),
		TelegramAPI: telegram.URL, Logger: slog.New(slog.DiscardHandler), Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Inbound: channels, Logger: slog.New(slog.DiscardHandler), Metrics: reg, Web: web.Files()})
	if err != nil {
		t.Fatal(err)
	}
	w.st, w.svc, w.rt, w.shopURL = st, svc, rt, shop.URL
	w.api = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if (w.cut.Load() && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages")) ||
			(w.cutSignOut.Load() && r.URL.Path == "/v1/auth/logout") {
			if conn, _, err := rw.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/events") {
			w.following.Add(1)
			defer w.following.Add(-1)
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.api.Close)

	ctx, op := context.Background(), platform.Operator()
	_, created, err := svc.Tenants().Create(ctx, op, platform.CreateTenantInput{
		Slug: "acme", Name: "Acme Outdoor", OwnerEmail: ownerEmail, OwnerPassword: ownerPassword})
	if err != nil {
		t.Fatal(err)
	}
	w.adminKey = created.Key
	if _, err := svc.Identities().Put(ctx, op, "acme", platform.IdentityInput{Secret: identitySecret}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bots().Create(ctx, op, "acme", "support", []byte(strings.ReplaceAll(botConfig, "SHOP", shop.URL))); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Versions().Publish(ctx, op, "acme", "support", 1); err != nil {
		t.Fatal(err)
	}
	// A test that fails while the model holds its answer lets it go before
	// the runtime and the model's server stop, which wait for it.
	t.Cleanup(func() { close(w.held) })
	return w
}

// answer lets the model's held answer go, once asked has said it waits.
func (w *world) answer() { w.held <- struct{}{} }

// model is the fake model's script: it reports a tool's result, calls
// locate when asked where the visitor is, cancel_order when asked to
// cancel, order_status (form_editor_test.go) with the order named when asked the status of an
// order, handoff_to_human when asked for a person, answers "show me Markdown" with a formatted and a hostile reply
// (markdown_test.go) and a "packing list" with a short Markdown list, and otherwise echoes the visitor. Replies stream in small
// fragments.
func model(req *llmtest.ChatRequest) llmtest.ServerReply {
	last := req.Messages[len(req.Messages)-1]
	var text string
	_ = json.Unmarshal(last.Content, &text)
	switch {
	case text == "make the model fail":
		return llmtest.ServerReply{Fault: &llmtest.Fault{Status: 400, Type: "invalid_request_error", Message: "no"}}
	case len(last.ImageURLs()) > 0:
		return llmtest.ServerReply{Text: fmt.Sprintf("I see %d image(s) and read %q.", len(last.ImageURLs()), last.Text())}
	case last.Role == "tool" && strings.HasPrefix(text, "[1] ") && strings.Contains(text, "aluminium sleeve"):
		return llmtest.ServerReply{Text: "Splint the broken pole with the aluminium sleeve [1]."}
	case last.Role == "tool" && strings.HasPrefix(text, "[") && strings.Contains(text, "45 days"):
		// A later search numbers past the dialog's earlier citations.
		first, _, _ := strings.Cut(text, " ")
		return llmtest.ServerReply{Text: "Send the kayak back within 45 days " + first + "."}
	case last.Role == "tool" && strings.HasPrefix(text, "[") && strings.Contains(text, "repair tape"):
		first, _, _ := strings.Cut(text, " ")
		return llmtest.ServerReply{Text: "Seal the seam with the repair tape " + first + "."}
	case last.Role == "tool" && strings.HasPrefix(text, "[1] "):
		// search_knowledge's numbered passages: an answer citing the first.
		return llmtest.ServerReply{Text: "Refunds take five business days [1]."}
	case last.Role == "tool":
		return llmtest.ServerReply{Text: "Tool said: " + text}
	case strings.Contains(text, "refunds") && slices.Contains(req.ToolNames(), "search_knowledge"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_search", Name: "search_knowledge", Arguments: `{"query":"refunds"}`}}}
	case strings.Contains(text, "tent pole") && slices.Contains(req.ToolNames(), "search_knowledge"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_search", Name: "search_knowledge", Arguments: `{"query":"splint broken pole aluminium sleeve"}`}}}
	case strings.Contains(text, "kayak") && slices.Contains(req.ToolNames(), "search_knowledge"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_search", Name: "search_knowledge", Arguments: `{"query":"send a kayak back refund"}`}}}
	case strings.Contains(text, "leaking seam") && slices.Contains(req.ToolNames(), "search_knowledge"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_search", Name: "search_knowledge", Arguments: `{"query":"seal seam repair tape"}`}}}
	case strings.Contains(text, "where am I"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_locate", Name: "locate", Arguments: `{}`}}}
	case text == "show me Markdown":
		return llmtest.ServerReply{Text: normal + "\n\n" + hostile}
	case strings.Contains(text, "status of order"):
		order := strings.Fields(strings.TrimRight(text[strings.Index(text, "status of order")+len("status of order"):], "?"))
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_status", Name: "order_status", Arguments: fmt.Sprintf(`{"order":%q}`, order[0])}}}
	case strings.Contains(text, "packing list"):
		return llmtest.ServerReply{Text: packingList}
	case strings.Contains(text, "ask the agent"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_agent", Name: "ask_support", Arguments: `{"input":"hello from the concierge"}`}}}
	case strings.Contains(text, "cancel"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_cancel", Name: "cancel_order", Arguments: `{"order":"A1"}`}}}
	case strings.Contains(text, "talk to a person"):
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_handoff", Name: "handoff_to_human", Arguments: `{"reason":"the visitor asked for a person","summary":"Order 1042 arrived damaged; a refund was asked for."}`}}}
	case strings.Contains(text, "story"):
		return llmtest.ServerReply{Text: longStory, Fault: &llmtest.Fault{ChunkDelay: 50 * time.Millisecond}}
	}
	return llmtest.ServerReply{Text: "Echo: " + text}
}

// packingList is a short Markdown reply: a bold heading word, emphasis,
// inline code and a list.
const packingList = "**Packing list** for a *wet* weekend:\n\n- Tent\n- Headlamp\n- `stove` and fuel"

// identitySecret is the HS256 secret acme's backend signs user tokens with.
const identitySecret = "acme-identity-secret-0123456789abcdefghij"

// userToken is what acme's backend would put in its page for a signed-in
// visitor: a ten-minute token naming the user and their tier.
func userToken(t *testing.T, sub, tier string) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "tier": tier,
		"iat": time.Now().Unix(), "exp": time.Now().Add(10 * time.Minute).Unix()}).SignedString([]byte(identitySecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// longStory is a reply that streams for several seconds, long enough for
// the visitor to stop it.
var longStory = "Once upon a time " + strings.Repeat("the parcel travelled on, ", 20) + "and arrived."

// widgetKey makes a pk_ key for the bot that may be used from origins.
func (w *world) widgetKey(t *testing.T, origins ...string) string {
	t.Helper()
	k, err := w.svc.APIKeys().Create(context.Background(), platform.Operator(), "acme",
		platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "support", Origins: origins})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// site is a customer's web site on its own origin: "/?key=pk_..." is a page
// that embeds the widget from the API server with that key.
func (w *world) site(t *testing.T) *httptest.Server {
	t.Helper()
	return w.siteWith(t, "")
}

// siteWith is site with more attributes (HTML) on the widget's script tag;
// "SITE" in them is replaced with the site's own origin.
func (w *world) siteWith(t *testing.T, attrs string) *httptest.Server {
	t.Helper()
	var s *httptest.Server
	s = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme Outdoor</title>
<style>body{font-family:Georgia,serif;margin:40px;background:#fdfaf3} *{color:red !important; font-size:30px !important}</style></head>
<script>window.Parley = {onClientTool: async (name, args) => ({city: "Oslo", tool: name})};</script>
<body><h1>Acme Outdoor</h1><p>Tents, packs and everything for the trail.</p>
<script src="%s/widget.js" data-key="%s" data-tenant="acme" data-bot="support" data-user-token="%s"
  data-context='{"page_lang":"de"}' %s async></script></body></html>`, w.api.URL, r.URL.Query().Get("key"), userToken(t, "u-42", "gold"), strings.ReplaceAll(attrs, "SITE", s.URL))
	}))
	t.Cleanup(s.Close)
	return s
}

// signInAs opens the admin UI and signs in with an API key of tenant.
func (w *world) signInAs(key, tenant string) chromedp.Action[chromedp.Void] {
	return steps(
		chromedp.Navigate(w.api.URL+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="api_key"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="api_key"]`), key),
		chromedp.SendKeys(chromedp.CSS(`input[name="tenant"]`), tenant),
		chromedp.Click(chromedp.CSS(`form:has(input[name="api_key"]) button[type="submit"]`)),
	)
}

// steps is one action that runs several in order.
func steps(actions ...chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		for i, a := range actions {
			if v, err := a(ctx, tgt); err != nil {
				return v, fmt.Errorf("part %d of %d: %w", i+1, len(actions), err)
			}
		}
		return chromedp.Void{}, nil
	}
}

// run runs browser actions, failing the test with what was being done.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*waitLimit)
	defer cancel()
	for i, step := range steps {
		if err := chromedp.Do(ctx, step); err != nil {
			t.Fatalf("%s, step %d of %d: %v", what, i+1, len(steps), err)
		}
	}
}

// eval evaluates a JavaScript expression in the page and returns its value,
// awaiting it when it is a promise.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// until waits for a JavaScript expression to be truthy.
func until(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(waitLimit), chromedp.WithPollingInterval(50*time.Millisecond))
}

// do runs a JavaScript statement in the page for its effect. A promise is
// awaited, so the next action (a key press, say) sees the effect: without
// that, keys typed right after moving the cursor went to the old place.
func do(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](expr, chromedp.EvalAwaitPromise)
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// screenshot writes the page as name.png to -screenshots or the test's
// temporary folder, and logs where.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// Two animation frames first: a page that has just arrived (after a
	// redirect, say) may not be laid out yet, and Chromium refuses to
	// capture a page of width 0.
	if _, err := chromedp.Run(ctx, do(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`)); err != nil {
		t.Fatalf("screenshot %s: wait for a frame: %v", name, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := *screenshots
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// shadow is an expression for the widget's shadow root.
const shadow = `document.getElementById('parley-widget').shadowRoot`

// textOf is an expression joining the text of every element matching css
// under root ("document" or shadow).
func textOf(root, css string) string {
	return fmt.Sprintf(`Array.from(%s.querySelectorAll(%s)).map(e => e.textContent).join("\n")`, root, js(css))
}

// contains is an expression true once the joined text of css under root
// contains want.
func contains(root, css, want string) string {
	return fmt.Sprintf(`(%s).includes(%s)`, textOf(root, css), js(want))
}
