package api_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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

// insightsEnv is the real API with a runtime on a clock the test moves,
// a bot whose HTTP tool always fails, and the strict fake model.
type insightsEnv struct {
	*env
	rt    *dialog.Runtime
	llm   *llmtest.Server
	key   string
	mu    sync.Mutex
	clock time.Time
}

func (e *insightsEnv) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock
}

func (e *insightsEnv) advance(d time.Duration) {
	e.mu.Lock()
	e.clock = e.clock.Add(d)
	e.mu.Unlock()
}

func insightsBot(shopURL string) string {
	return `{"basic_settings": {"name": "Shop"},
  "tools": [{"name": "lookup_order", "description": "Look up an order",
     "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
     "endpoint": {"url": "` + shopURL + `/orders/<order>", "method": "GET"}}],
  "native_tools": ["handoff_to_human", "cannot_answer"],
  "llm": {"model": "gpt-4o-mini"}}`
}

func newInsightsEnv(t *testing.T, st *store.Store) *insightsEnv {
	t.Helper()
	e := &insightsEnv{clock: time.Now().UTC()}
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error": "the order service is down"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(shop.Close)
	e.llm = llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test"})
	provider, err := openai.New(openai.Config{BaseURL: e.llm.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(shop.URL)
	port, _ := strconv.Atoi(u.Port())
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port})
	if err != nil {
		t.Fatal(err)
	}
	sealKey := make([]byte, auth.KeySize)
	rand.Read(sealKey)
	sealer, _ := auth.NewSealer(sealKey)
	svc := platformtest.New(t, st, platform.Options{Sealer: sealer, PlatformToken: testPlatformToken,
		Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost}})
	reg := prometheus.NewRegistry()
	e.rt = dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "gpt-4o-mini",
		HTTPClient: outbound.NewClient(policy, outbound.Options{}), Metrics: reg, Clock: e.now})
	h, err := api.New(api.Options{Platform: svc, Runtime: e.rt, Metrics: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.env = &env{svc: svc, srv: srv, h: h, reg: reg, logs: &redacttest.Logs{}}
	e.key = e.mustCreateTenant(t, "shop")
	op := platform.Operator()
	ctx := context.Background()
	if _, _, err := svc.Bots().Create(ctx, op, "shop", "helper", []byte(insightsBot(shop.URL))); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Versions().Publish(ctx, op, "shop", "helper", 1); err != nil {
		t.Fatal(err)
	}
	return e
}

// start starts a dialog of user with the shop's bot.
func (e *insightsEnv) start(t *testing.T, user string) string {
	t.Helper()
	d, err := e.client(e.key).CreateDialog(context.Background(), "shop", "helper", apiclient.CreateDialogRequest{UserID: user})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// say sends text to dialog d, the model answering with replies.
func (e *insightsEnv) say(t *testing.T, d, text string, replies ...llmtest.ServerReply) {
	t.Helper()
	e.llm.Enqueue(replies...)
	r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text": `+strconv.Quote(text)+`}`)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("message: %d %s", r.StatusCode, r.body)
	}
	if n := e.llm.Pending(); n != 0 {
		t.Fatalf("%d scripted replies left unused", n)
	}
}

func (e *insightsEnv) close(t *testing.T, d string) *apiclient.Dialog {
	t.Helper()
	got, err := e.client(e.key).CloseDialog(context.Background(), "shop", d, "done")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func scriptedText(s string) llmtest.ServerReply { return llmtest.ServerReply{Text: s} }

func scriptedCall(name, args string) llmtest.ServerReply {
	return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: name, Arguments: args}}}
}

func rate(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestInsightsCountScriptedDialogsExactly drives a scripted set of
// dialogs through the real server (resolved, handed off, rated down,
// abandoned, asked again, a model that cannot answer, a failing tool; a
// live and a canary version) and checks the outcomes, rates, versions,
// unanswered groups and the test made from a dialog.
func TestInsightsCountScriptedDialogsExactly(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newInsightsEnv(t, st)
		ctx := context.Background()
		c := e.client(e.key)

		// The live version, 1.
		d1 := e.start(t, "u-order")
		e.say(t, d1, "Where is my order?", scriptedText("It shipped yesterday."))
		if got := e.close(t, d1); got.Outcome == nil || *got.Outcome != "resolved" {
			t.Fatalf("answered and closed: outcome %v", got.Outcome)
		}
		d2 := e.start(t, "u2")
		e.say(t, d2, "I want a refund for my broken tent", scriptedCall("handoff_to_human", `{"reason":"refund"}`))
		d3 := e.start(t, "u3")
		e.say(t, d3, "Can I get a refund for a broken tent?", scriptedText("I do not know."))
		if _, err := c.RateDialog(ctx, "shop", d3, apiclient.RatingRequest{Thumbs: "down"}); err != nil {
			t.Fatal(err)
		}
		d4 := e.start(t, "u4") // never says a word
		d5 := e.start(t, "u5")
		e.say(t, d5, "What are your opening hours?", scriptedText("Nine to five."))
		if _, err := c.RateDialog(ctx, "shop", d5, apiclient.RatingRequest{Rating: 5}); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{d2, d3} {
			e.close(t, d)
		}
		// The same user asks the same question again: d1 was not resolved.
		d9 := e.start(t, "u-order")
		e.say(t, d9, "where is my order??", scriptedText("It arrives tomorrow."))
		e.close(t, d9)

		// Version 2 as a canary for every new dialog.
		op := platform.Operator()
		v1, err := e.svc.Versions().Get(ctx, op, "shop", "helper", 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.svc.Versions().Create(ctx, op, "shop", "helper", []byte(strings.Replace(string(v1.Config), `"Shop"`, `"Shop 2"`, 1))); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().SetCanary(ctx, op, "shop", "helper", 2, 100); err != nil {
			t.Fatal(err)
		}
		d6 := e.start(t, "u6")
		e.say(t, d6, "Do you ship abroad?", scriptedText("Yes, everywhere."))
		d7 := e.start(t, "u7")
		e.say(t, d7, "Do you sell bicycles?", scriptedCall("cannot_answer", `{"reason":"no catalogue"}`), scriptedText("Sorry, I cannot help with that."))
		d8 := e.start(t, "u8")
		e.say(t, d8, "Track order 7", scriptedCall("lookup_order", `{"order":"7"}`), scriptedText("Could not look it up right now."))
		for _, d := range []string{d6, d7, d8} {
			e.close(t, d)
		}

		// d4 and d5 go quiet for longer than the idle period.
		e.advance(31 * time.Minute)
		if n, err := e.rt.Insights().SweepIdle(ctx); err != nil || n != 2 {
			t.Fatalf("idle sweep settled %d, %v; want d4 and d5", n, err)
		}
		if n, err := e.rt.Insights().SweepIdle(ctx); err != nil || n != 0 {
			t.Fatalf("second sweep settled %d, %v", n, err)
		}

		want := map[string]string{d1: "failed", d2: "handed_off", d3: "failed", d4: "abandoned", d5: "resolved",
			d6: "resolved", d7: "failed", d8: "resolved", d9: "resolved"}
		reasons := map[string]string{d1: "came_back", d3: "rated_down", d4: "no_message", d7: "cannot_answer"}
		for id, outcome := range want {
			got, err := c.GetDialog(ctx, "shop", id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Outcome == nil || *got.Outcome != outcome {
				t.Errorf("dialog %s: outcome %v, want %s", id, got.Outcome, outcome)
			}
			if r, ok := reasons[id]; ok && got.OutcomeReason != r {
				t.Errorf("dialog %s: reason %q, want %q", id, got.OutcomeReason, r)
			}
		}

		t.Run("the dialog list filters by outcome", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs?outcome=failed", e.key, "")
			var list apiclient.DialogList
			if err := json.Unmarshal([]byte(r.body), &list); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, d := range list.Dialogs {
				ids = append(ids, d.ID)
			}
			slices.Sort(ids)
			wantIDs := []string{d1, d3, d7}
			slices.Sort(wantIDs)
			if !slices.Equal(ids, wantIDs) {
				t.Fatalf("failed dialogs %v, want %v", ids, wantIDs)
			}
			if r := e.raw(t, "GET", "/v1/tenants/shop/dialogs?outcome=great", e.key, ""); r.StatusCode != http.StatusUnprocessableEntity ||
				!strings.Contains(r.body, "/outcome") {
				t.Fatalf("a bad outcome: %d %s", r.StatusCode, r.body)
			}
		})

		t.Run("the export carries each dialog's outcome", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/export", e.key, "")
			if r.StatusCode != http.StatusOK || strings.Count(r.body, `"outcome":"handed_off"`) != 1 || strings.Count(r.body, `"outcome":"resolved"`) != 4 {
				t.Fatalf("export: %d\n%s", r.StatusCode, r.body)
			}
		})

		t.Run("analytics count every outcome and rate", func(t *testing.T) {
			a, err := c.Analytics(ctx, "shop", apiclient.AnalyticsQuery{Bot: "helper", Compare: "versions"})
			if err != nil {
				t.Fatal(err)
			}
			wantOut := apiclient.OutcomeCounts{Resolved: 4, HandedOff: 1, Abandoned: 1, Failed: 3}
			if a.Dialogs != 9 || a.Outcomes != wantOut {
				t.Fatalf("dialogs %d, outcomes %+v; want 9, %+v", a.Dialogs, a.Outcomes, wantOut)
			}
			checks := []struct {
				name      string
				got, want float64
			}{
				{"resolution_rate", rate(a.ResolutionRate), 4.0 / 9},
				{"handoff_rate", rate(a.HandoffRate), 1.0 / 9},
				{"abandonment_rate", rate(a.AbandonmentRate), 1.0 / 9},
				{"csat", rate(a.CSAT), 0.5},
				{"tool_failure_rate", rate(a.ToolFailureRate), 1.0 / 3},
			}
			for _, ch := range checks {
				if !near(ch.got, ch.want) {
					t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
				}
			}
			if a.Ratings != 2 || a.ToolCalls != 3 || a.FirstResponseMS == nil || a.CostPerResolved == nil {
				t.Errorf("ratings %d, tool calls %d, first response %v, cost per resolved %v", a.Ratings, a.ToolCalls,
					a.FirstResponseMS, a.CostPerResolved)
			}
			var series int64
			for _, p := range a.Series {
				series += p.Dialogs
			}
			if series != 9 || a.Bucket != "day" {
				t.Errorf("the series counts %d dialogs in buckets of a %s", series, a.Bucket)
			}
			if len(a.Versions) != 2 {
				t.Fatalf("versions %+v", a.Versions)
			}
			live, canary := a.Versions[0], a.Versions[1]
			if live.Role != "live" || live.Version != 1 || live.Dialogs != 6 || live.Outcomes.Resolved != 2 || live.Outcomes.HandedOff != 1 {
				t.Errorf("live %+v", live)
			}
			if canary.Role != "canary" || canary.Version != 2 || canary.Dialogs != 3 || canary.Outcomes.Resolved != 2 || canary.Outcomes.Failed != 1 {
				t.Errorf("canary %+v", canary)
			}
			for _, v := range a.Versions {
				if v.Enough || v.Note != dialog.NotEnoughDialogs || v.ResolutionCI != nil {
					t.Errorf("version %d with %d dialogs: enough %v, note %q", v.Version, v.Dialogs, v.Enough, v.Note)
				}
			}
			r := e.raw(t, "GET", "/v1/tenants/shop/analytics?bot=helper&format=csv", e.key, "")
			lines := strings.Split(strings.TrimSpace(r.body), "\n")
			if r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") ||
				!strings.HasPrefix(lines[0], "start,dialogs,resolved") || len(lines) != len(a.Series)+1 {
				t.Errorf("csv: %d %s %q", r.StatusCode, r.Header.Get("Content-Type"), r.body)
			}
			if r := e.raw(t, "GET", "/v1/tenants/shop/analytics?bucket=week", e.key, ""); r.StatusCode != http.StatusUnprocessableEntity ||
				!strings.Contains(r.body, "/bucket") {
				t.Errorf("a bad bucket: %d %s", r.StatusCode, r.body)
			}
		})

		t.Run("unanswered questions are grouped", func(t *testing.T) {
			got, err := c.Unanswered(ctx, "shop", apiclient.AnalyticsQuery{Bot: "helper"})
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				count   int
				dialogs []string
			}
			var rows []row
			for _, g := range got.Groups {
				rows = append(rows, row{g.Count, g.Dialogs})
			}
			wantRows := []row{{2, []string{d2, d3}}, {1, []string{d7}}, {1, []string{d8}}}
			if len(rows) != len(wantRows) {
				t.Fatalf("groups %+v", got.Groups)
			}
			for i := range rows {
				if rows[i].count != wantRows[i].count || !slices.Equal(rows[i].dialogs, wantRows[i].dialogs) {
					t.Errorf("group %d: %+v, want %+v", i, got.Groups[i], wantRows[i])
				}
			}
			if g := got.Groups[0]; len(g.Examples) != 2 || g.Reasons["handoff"] != 1 || g.Reasons["rated_down"] != 1 {
				t.Errorf("refund group %+v", g)
			}
			if g := got.Groups[1]; g.Question != "Do you sell bicycles?" || g.Reasons["cannot_answer"] != 1 {
				t.Errorf("bicycles group %+v", g)
			}
		})

		t.Run("a dialog becomes a test the bot's tests run", func(t *testing.T) {
			got, err := c.DialogToTest(ctx, "shop", d8, apiclient.ToTestRequest{Name: "order lookup fails politely",
				ToolsCalled: true, ReplyContains: []string{"Could not"}, NoHandoff: true, Save: true})
			if err != nil {
				t.Fatal(err)
			}
			if got.Bot != "helper" || got.Version != 3 || !strings.Contains(string(got.Test), `"lookup_order"`) {
				t.Fatalf("to-test %+v %s", got, got.Test)
			}
			run, err := c.RunTests(ctx, "shop", "helper", 3)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Passed || len(run.Results) != 1 {
				t.Fatalf("the saved test: %+v", run)
			}
		})

		t.Run("labels are set and filter the list", func(t *testing.T) {
			got, err := c.SetLabels(ctx, "shop", d6, []string{"shipping", " vip ", "shipping"})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Labels, []string{"shipping", "vip"}) {
				t.Fatalf("labels %v", got.Labels)
			}
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs?label=vip", e.key, "")
			var list apiclient.DialogList
			if err := json.Unmarshal([]byte(r.body), &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Dialogs) != 1 || list.Dialogs[0].ID != d6 {
				t.Fatalf("labelled %+v", list.Dialogs)
			}
		})
	})
}
