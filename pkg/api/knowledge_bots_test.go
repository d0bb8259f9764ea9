package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/pkg/webhook"
	"golang.org/x/crypto/bcrypt"
)

// kbEnv is a server whose bots answer from a knowledge base "help" of
// tenant "acme", indexed by the real ingestion worker with the fake
// model's embeddings: a help page served over HTTP (it has a URL), and
// plan documents tagged plan-a and plan-b.
type kbEnv struct {
	*env
	llm   *llmtest.Server
	key   string
	st    *store.Store
	pages *httptest.Server
	clock *platformtest.Clock
	// index runs the ingestion worker until no source is left to index.
	index func(t *testing.T)
}

const refundsPage = `<html><head><title>Refunds</title></head><body>
<h1 id="refunds">Refunds</h1><p>Refunds take five business days after we receive the parcel.</p></body></html>`

func newKBEnv(t *testing.T, st *store.Store) *kbEnv {
	t.Helper()
	e := &kbEnv{st: st, clock: platformtest.NewClock(time.Now().UTC())}
	e.pages = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, refundsPage)
	}))
	t.Cleanup(e.pages.Close)
	e.llm = llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test", FragmentSize: 3})
	provider, err := openai.New(openai.Config{Name: "fake", BaseURL: e.llm.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	embedders := func(name string) (llm.Embedder, bool) { return provider, name == "fake" }
	sealer, _ := auth.NewSealer(make([]byte, auth.KeySize))
	logs := &redacttest.Logs{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	svc := platformtest.New(t, st, platform.Options{Sealer: sealer, PlatformToken: testPlatformToken,
		Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost}, Logger: logger, Embedders: embedders, Clock: e.clock.Now})
	reg := prometheus.NewRegistry()
	rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "gpt-4o-mini", Metrics: reg, Logger: logger})
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Metrics: reg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.env = &env{svc: svc, srv: srv, h: h, reg: reg, logs: logs}
	e.key = e.mustCreateTenant(t, "acme")

	ctx := context.Background()
	cl := e.client(e.key)
	if _, err := cl.CreateKnowledgeBase(ctx, "acme", apiclient.CreateKnowledgeBaseRequest{Name: "Help",
		Embedding: &apiclient.Embedding{Provider: "fake", Model: "embed-small"}}); err != nil {
		t.Fatal(err)
	}
	for _, src := range []apiclient.AddSourceRequest{
		{URL: e.pages.URL + "/refunds"},
		{Title: "Plan A prices", Text: "Plan A costs 10 euros a month.", Tags: []string{"plan-a"}},
		{Title: "Plan B prices", Text: "Plan B costs 30 euros a month.", Tags: []string{"plan-b"}},
	} {
		if _, _, err := cl.AddSource(ctx, "acme", "help", src); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(e.pages.URL)
	port, _ := strconv.Atoi(u.Port())
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port})
	if err != nil {
		t.Fatal(err)
	}
	w := ingest.New(st, embedders, ingest.Options{Outbound: policy})
	e.index = func(t *testing.T) {
		t.Helper()
		for {
			n, err := w.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	e.index(t)
	srcs, err := cl.ListSources(ctx, "acme", "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs.Sources {
		if s.Status != "ready" {
			t.Fatalf("source %s is %s: %s", s.Title, s.Status, s.Error)
		}
	}
	return e
}

// bot creates and publishes a bot with the given knowledge section.
func (e *kbEnv) bot(t *testing.T, slug, knowledge string) {
	t.Helper()
	ctx, op := context.Background(), platform.Operator()
	config := `{"basic_settings": {"name": "Help"}, "knowledge": ` + knowledge + `}`
	if _, _, err := e.svc.Bots().Create(ctx, op, "acme", slug, []byte(config)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(ctx, op, "acme", slug, 1); err != nil {
		t.Fatal(err)
	}
}

func (e *kbEnv) dialog(t *testing.T, bot, token string, body string) string {
	t.Helper()
	r := e.raw(t, "POST", "/v1/tenants/acme/bots/"+bot+"/dialogs", token, body)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
	}
	var d apiclient.Dialog
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func TestABotAnswersFromItsKnowledgeBaseAndCitesIt(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newKBEnv(t, st)
		ctx := context.Background()
		cl := e.client(e.key)
		if _, err := e.svc.Webhooks().Create(ctx, platform.Operator(), "acme", platform.WebhookInput{URL: "https://receiver.example/hook",
			Events: []string{webhook.MessageCreated}}); err != nil {
			t.Fatal(err)
		}
		e.bot(t, "helper", `{"bases": ["help"]}`)
		refunds := apiclient.Citation{N: 1, Title: "Refunds", URL: e.pages.URL + "/refunds", Locator: "Refunds, #refunds"}

		first := e.dialog(t, "helper", e.key, `{"user_id": "u1"}`)
		t.Run("tool mode: the model searches, its answer's markers become citations in the stream", func(t *testing.T) {
			d := first
			e.llm.Enqueue(
				llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "search_knowledge", Arguments: `{"query": "how long do refunds take"}`}}},
				llmtest.ServerReply{Text: "Refunds take five business days [1]. See [1] and [9]."})
			r := e.raw(t, "POST", "/v1/tenants/acme/dialogs/"+d+"/messages", e.key, `{"text": "When do I get my money back?"}`, "Accept", "text/event-stream")
			if r.StatusCode != http.StatusOK {
				t.Fatalf("message: %d %s", r.StatusCode, r.body)
			}
			events := readSSE(t, r.body)
			var citations []map[string]any
			var final map[string]any
			for _, ev := range events {
				switch ev.typ {
				case "citation":
					citations = append(citations, ev.data)
				case "message":
					if m := ev.data["message"].(map[string]any); m["role"] == "assistant" && m["kind"] == "assistant" && m["text"] != "" {
						final = m
					}
				}
			}
			if len(citations) != 1 || citations[0]["n"] != 1.0 || citations[0]["title"] != "Refunds" || citations[0]["url"] != refunds.URL ||
				citations[0]["locator"] != refunds.Locator || citations[0]["source"] == "" {
				t.Fatalf("citation events %v, want one for [1] (none for [9], never given)", citations)
			}
			if final == nil || len(final["citations"].([]any)) != 1 {
				t.Fatalf("final message %v", final)
			}
			tool := e.llm.LastRequest().Messages
			if got := tool[len(tool)-1].Text(); !strings.HasPrefix(got, "[1] Refunds (Refunds, #refunds) "+refunds.URL+"\nRefunds take five business days") {
				t.Fatalf("the model read:\n%s", got)
			}
			if sys := e.llm.LastRequest().System(); !strings.Contains(sys, "search_knowledge") || !strings.Contains(sys, "[1]") {
				t.Fatalf("the prompt does not say how to cite:\n%s", sys)
			}

			detail, err := cl.GetDialog(ctx, "acme", d)
			if err != nil {
				t.Fatal(err)
			}
			last := detail.Messages[len(detail.Messages)-1]
			if len(last.Citations) == 1 {
				refunds.Source = last.Citations[0].Source // a source id, which the stream checked is set
			}
			if len(last.Citations) != 1 || last.Citations[0] != refunds {
				t.Fatalf("stored reply %+v", last)
			}
			hooks := platformtest.OutboxData(t, st, webhook.MessageCreated)
			var hooked []any
			for _, h := range hooks {
				if m := h["message"].(map[string]any); m["role"] == "assistant" {
					hooked, _ = m["citations"].([]any)
				}
			}
			if len(hooked) != 1 || hooked[0].(map[string]any)["url"] != refunds.URL {
				t.Fatalf("message.created events %v", hooks)
			}
		})

		t.Run("a later message numbers past the history's markers, so an old number cites nothing", func(t *testing.T) {
			e.llm.Enqueue(
				llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c2", Name: "search_knowledge", Arguments: `{"query": "plan prices"}`}}},
				llmtest.ServerReply{Text: "As said [1]; and see [10]."})
			turn, err := cl.SendMessage(ctx, "acme", first, "And what do the plans cost?")
			if err != nil {
				t.Fatal(err)
			}
			tool := e.llm.LastRequest().Messages
			// The first reply's text went up to [9], a number it was never given.
			if got := tool[len(tool)-1].Text(); !strings.HasPrefix(got, "[10] ") {
				t.Fatalf("the second run's passages start %q, want [10]", got[:min(len(got), 40)])
			}
			last := turn.Messages[len(turn.Messages)-1]
			if len(last.Citations) != 1 || last.Citations[0].N != 10 {
				t.Fatalf("reply %+v, want only [10] cited", last)
			}
		})

		t.Run("the query's embedding is metered apart from the model's tokens", func(t *testing.T) {
			embedded := 0
			for _, rec := range e.llm.Requests() {
				if rec.Path == "/v1/embeddings" && strings.Contains(string(rec.Body), "how long do refunds take") {
					embedded++
				}
			}
			if embedded != 1 {
				t.Fatalf("%d embeddings requests for the query, want 1", embedded)
			}
			report, err := cl.Usage(ctx, "acme", "", "", "bot")
			if err != nil {
				t.Fatal(err)
			}
			var tokens int64
			for _, row := range report.Usage {
				tokens += row.EmbeddingTokens
			}
			if tokens <= 0 {
				t.Fatalf("usage %+v, want embedding tokens", report.Usage)
			}
			metrics := e.raw(t, "GET", "/metrics", "", "").body
			for _, want := range []string{`parley_knowledge_searches_total{mode="tool",outcome="ok"} 2`, fmt.Sprintf("parley_knowledge_embedding_tokens_total %d", tokens)} {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("/metrics lacks %q", want)
				}
			}
		})

		t.Run("auto mode: passages for the user's message are in the prompt, cited in the JSON turn", func(t *testing.T) {
			e.bot(t, "auto", `{"bases": ["help"], "mode": "auto", "top_k": 2}`)
			d := e.dialog(t, "auto", e.key, `{"user_id": "u2"}`)
			e.llm.Enqueue(llmtest.ServerReply{Text: "Five business days [1]."})
			turn, err := cl.SendMessage(ctx, "acme", d, "how long do refunds take?")
			if err != nil {
				t.Fatal(err)
			}
			req := e.llm.LastRequest()
			if sys := req.System(); !strings.Contains(sys, "## Knowledge base passages") || !strings.Contains(sys, "[1] Refunds (Refunds, #refunds)") {
				t.Fatalf("system prompt:\n%s", sys)
			}
			if names := req.ToolNames(); len(names) != 0 {
				t.Fatalf("auto mode offers tools %v", names)
			}
			last := turn.Messages[len(turn.Messages)-1]
			if len(last.Citations) != 1 || last.Citations[0].URL != refunds.URL {
				t.Fatalf("turn's reply %+v", last)
			}
		})

		t.Run("an agent's search numbers into its caller's run, so the caller's answer cites it", func(t *testing.T) {
			ctx, op := context.Background(), platform.Operator()
			if _, _, err := e.svc.Bots().Create(ctx, op, "acme", "front", []byte(`{"basic_settings": {"name": "Front"}, "agents": [{"bot": "helper", "name": "ask_help"}]}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Versions().Publish(ctx, op, "acme", "front", 1); err != nil {
				t.Fatal(err)
			}
			d := e.dialog(t, "front", e.key, `{"user_id": "u3"}`)
			e.llm.Enqueue(
				llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "a1", Name: "ask_help", Arguments: `{"input": "refund time?"}`}}},
				llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "s1", Name: "search_knowledge", Arguments: `{"query": "refunds"}`}}},
				llmtest.ServerReply{Text: "Five business days [1]."},
				llmtest.ServerReply{Text: "The help desk says: five business days [1]."})
			turn, err := cl.SendMessage(ctx, "acme", d, "When is my refund due?")
			if err != nil {
				t.Fatal(err)
			}
			last := turn.Messages[len(turn.Messages)-1]
			if last.Text != "The help desk says: five business days [1]." || len(last.Citations) != 1 || last.Citations[0].URL != refunds.URL {
				t.Fatalf("the caller's reply %+v", last)
			}
		})

		t.Run("a bot naming a base the tenant does not have is refused with its pointer", func(t *testing.T) {
			_, _, err := e.svc.Bots().Create(ctx, platform.Operator(), "acme", "typo", []byte(`{"basic_settings": {"name": "T"}, "knowledge": {"bases": ["help", "helpp"]}}`))
			var pe *platform.Error
			if !errors.As(err, &pe) || pe.Code != platform.CodeInvalid || len(pe.Details) != 1 || pe.Details[0].Pointer != "/knowledge/bases/1" {
				t.Fatalf("create: %v", err)
			}
			v, err := cl.ValidateFor(ctx, "acme", json.RawMessage(`{"basic_settings": {"name": "T"}, "knowledge": {"bases": ["nope"]}}`))
			if err != nil || len(v.Errors) != 1 || v.Errors[0].Pointer != "/knowledge/bases/0" {
				t.Fatalf("validate: %+v, %v", v, err)
			}
		})
	})
}

// signPlans signs end-user tokens with jose from npm (testdata/sign_plans.mjs);
// it skips when node or jose (.ci/install-jose.sh) is missing.
func signPlans(t *testing.T, secret, aud string, users map[string]map[string]any) map[string]string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found; the signed-token suites need node and jose (bash .ci/install-jose.sh)")
	}
	jose, _ := filepath.Abs(filepath.Join("..", "..", ".ci", "jose", "node_modules", "jose"))
	if _, err := os.Stat(filepath.Join(jose, "package.json")); err != nil {
		t.Skip("jose is not installed; run bash .ci/install-jose.sh")
	}
	spec, _ := json.Marshal(map[string]any{"secret": secret, "aud": aud, "users": users})
	out, err := exec.Command(node, filepath.Join("testdata", "sign_plans.mjs"), string(spec), jose).Output()
	if err != nil {
		t.Fatalf("sign_plans.mjs: %v", err)
	}
	var tokens map[string]string
	if err := json.Unmarshal(out, &tokens); err != nil {
		t.Fatal(err)
	}
	return tokens
}

// TestTagsFromKeepsEachCustomerToTheirPlansDocuments: a bot with
// knowledge.tags_from "plan" searches, for a widget user with a signed
// token, the sources tagged with the token's plan claim and the untagged
// ones; for an anonymous visitor, the untagged ones only.
func TestTagsFromKeepsEachCustomerToTheirPlansDocuments(t *testing.T) {
	const site = "https://shop.example"
	tokens := signPlans(t, shopIdentitySecret, "shop.example", map[string]map[string]any{
		"a":    {"sub": "cust-a", "plan": "plan-a"},
		"b":    {"sub": "cust-b", "plan": []string{"plan-b"}},
		"none": {"sub": "cust-n"},
	})
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newKBEnv(t, st)
		ctx, op := context.Background(), platform.Operator()
		e.bot(t, "plans", `{"bases": ["help"], "mode": "auto", "tags_from": "plan"}`)
		if _, err := e.svc.Identities().Put(ctx, op, "acme", platform.IdentityInput{Secret: shopIdentitySecret, Audience: "shop.example"}); err != nil {
			t.Fatal(err)
		}
		pk, err := e.svc.APIKeys().Create(ctx, op, "acme", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "plans", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, token string
			want, never []string
		}{
			{"a customer of plan A reads plan A's documents and untagged ones", tokens["a"],
				[]string{"Plan A costs", "Refunds take"}, []string{"Plan B costs"}},
			{"a customer whose claim is a list reads the plans it names", tokens["b"],
				[]string{"Plan B costs", "Refunds take"}, []string{"Plan A costs"}},
			{"a signed user without the claim reads untagged documents only", tokens["none"],
				[]string{"Refunds take"}, []string{"Plan A costs", "Plan B costs"}},
			{"an anonymous visitor reads untagged documents only", "",
				[]string{"Refunds take"}, []string{"Plan A costs", "Plan B costs"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				headers := []string{"Origin", site}
				if tc.token != "" {
					headers = append(headers, "X-Parley-User-Token", tc.token)
				}
				r := e.raw(t, "POST", "/v1/tenants/acme/bots/plans/dialogs", pk.Key, `{}`, headers...)
				if r.StatusCode != http.StatusCreated {
					t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
				}
				var d apiclient.Dialog
				_ = json.Unmarshal([]byte(r.body), &d)
				e.llm.Enqueue(llmtest.ServerReply{Text: "Here is what I found [1]."})
				r = e.raw(t, "POST", "/v1/tenants/acme/dialogs/"+d.ID+"/messages", pk.Key,
					`{"text": "What does my plan cost per month, and how do refunds work?"}`, headers...)
				if r.StatusCode != http.StatusOK {
					t.Fatalf("message: %d %s", r.StatusCode, r.body)
				}
				sys := e.llm.LastRequest().System()
				for _, w := range tc.want {
					if !strings.Contains(sys, w) {
						t.Errorf("the prompt lacks %q:\n%s", w, sys)
					}
				}
				for _, n := range tc.never {
					if strings.Contains(sys, n) {
						t.Errorf("the prompt holds %q:\n%s", n, sys)
					}
				}
			})
		}
	})
}

func TestTheOfficialOpenAIClientReadsCitations(t *testing.T) {
	e := newKBEnv(t, storetest.OpenSQLite(t))
	e.bot(t, "helper", `{"bases": ["help"]}`)
	for range 2 {
		e.llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "search_knowledge", Arguments: `{"query": "refunds"}`}}},
			llmtest.ServerReply{Text: "Refunds take five business days [1]."})
	}
	type note struct {
		Type        string
		URLCitation struct {
			StartIndex int `json:"start_index"`
			EndIndex   int `json:"end_index"`
			Title, URL string
		} `json:"url_citation"`
	}
	var out struct {
		JSON, Stream struct {
			Content     string
			Annotations []note
		}
	}
	runClient(t, "openai_citations.mjs", &out, "PARLEY_URL="+e.srv.URL, "PARLEY_KEY="+e.key)
	for name, reply := range map[string]struct {
		Content     string
		Annotations []note
	}{"json": out.JSON, "stream": out.Stream} {
		t.Run(name+" replies carry a url_citation over the marker", func(t *testing.T) {
			if reply.Content != "Refunds take five business days [1]." || len(reply.Annotations) != 1 {
				t.Fatalf("reply %+v", reply)
			}
			a := reply.Annotations[0]
			if a.Type != "url_citation" || a.URLCitation.URL != e.pages.URL+"/refunds#refunds" || a.URLCitation.Title != "Refunds" ||
				reply.Content[a.URLCitation.StartIndex:a.URLCitation.EndIndex] != "[1]" {
				t.Fatalf("annotation %+v", a)
			}
		})
	}
}
