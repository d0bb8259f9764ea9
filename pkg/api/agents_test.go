package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// researcherBot checks the shop's stock; it is the agent other bots call.
func researcherBot(shopURL string) string {
	return `{"basic_settings": {"name": "Researcher"},
  "tools": [{"name": "check_stock", "description": "Check stock",
     "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
     "endpoint": {"url": "` + shopURL + `/stock/<item>", "method": "GET"}}],
  "llm": {"model": "gpt-4o-mini"}}`
}

// agentBot calls the bots named as agents; runtime is its runtime section.
func agentBot(name, agents, runtime string) string {
	return `{"basic_settings": {"name": "` + name + `"}, "agents": ` + agents + `,
  "llm": {"model": "gpt-4o-mini"}, "runtime": ` + runtime + `}`
}

func toolCall(name, args string) llmtest.ServerReply {
	return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: name, Arguments: args}}}
}

// create saves config as bot slug and publishes its latest version.
func (e *chatEnv) create(t *testing.T, slug, config string) {
	t.Helper()
	op := platform.Operator()
	ctx := context.Background()
	if _, _, err := e.svc.Bots().Create(ctx, op, "shop", slug, []byte(config)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(ctx, op, "shop", slug, 1); err != nil {
		t.Fatal(err)
	}
}

// stream sends text to dialog d as an event stream and returns its events.
func (e *chatEnv) stream(t *testing.T, d, text string) []sseEvent {
	t.Helper()
	r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text": "`+text+`"}`, "Accept", "text/event-stream")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("message: %d %s", r.StatusCode, r.body)
	}
	return readSSE(t, r.body)
}

// subRuns lists the sub-run dialogs of dialog d.
func (e *chatEnv) subRuns(t *testing.T, d string) []apiclient.Dialog {
	t.Helper()
	var list apiclient.DialogList
	r := e.raw(t, "GET", "/v1/tenants/shop/dialogs?parent="+d, e.key, "")
	if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &list) != nil {
		t.Fatalf("list sub-runs: %d %s", r.StatusCode, r.body)
	}
	return list.Dialogs
}

func TestAnAgentCallRunsTheOtherBotAsASubRun(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		e.create(t, "researcher", researcherBot(e.shop.URL))
		e.create(t, "concierge", agentBot("Concierge", `[{"bot": "researcher", "name": "ask_researcher", "description": "Ask the researcher about stock"}]`, `{}`))
		d := e.dialogWith(t, "concierge")
		before := len(e.llm.Requests())
		e.llm.Enqueue(toolCall("ask_researcher", `{"input":"Is the tent in stock?"}`),
			toolCall("check_stock", `{"item":"tent"}`),
			llmtest.ServerReply{Text: "The tent is in stock."},
			llmtest.ServerReply{Text: "Yes, the tent is in stock."})
		events := e.stream(t, d, "is the tent in stock?")

		var seen []string
		for _, ev := range events {
			if ev.typ == "text_delta" || ev.typ == "message" {
				continue
			}
			if a, ok := ev.data["agent"].(string); ok {
				seen = append(seen, ev.typ+"@"+a)
			} else {
				seen = append(seen, ev.typ)
			}
		}
		want := []string{"dialog", "turn_start", "tool_call", "agent_start@ask_researcher",
			"turn_start@ask_researcher", "tool_call@ask_researcher", "tool_result@ask_researcher", "turn_end@ask_researcher",
			"turn_start@ask_researcher", "turn_end@ask_researcher", "agent_end@ask_researcher",
			"tool_result", "turn_end", "turn_start", "turn_end", "done"}
		if !slices.Equal(seen, want) {
			t.Fatalf("events:\n%v\nwant\n%v", seen, want)
		}
		var end, result map[string]any
		for _, ev := range events {
			switch {
			case ev.typ == "agent_end":
				end = ev.data
			case ev.typ == "tool_result" && ev.data["agent"] == nil:
				result = ev.data
			}
		}
		if end["text"] != "The tent is in stock." || end["stop_reason"] != "completed" || result["content"] != "The tent is in stock." {
			t.Fatalf("agent_end %v, the concierge's tool result %v", end, result)
		}

		reqs := e.llm.Requests()[before:]
		if sys := reqs[1].Request.System(); !strings.Contains(sys, "You are Researcher") {
			t.Fatalf("the sub-run's model call has the system prompt %q, want the researcher's", sys)
		}
		if in := reqs[1].Request.LastUserText(); in != "Is the tent in stock?" {
			t.Fatalf("the sub-run's user message is %q, want the model's input", in)
		}
		if e.shopCalls("GET /stock/tent") != 1 {
			t.Fatal("the researcher's tool was not called")
		}

		subs := e.subRuns(t, d)
		if len(subs) != 1 || subs[0].ID != end["dialog_id"] || subs[0].ParentCallID != end["call_id"] || subs[0].Status != "closed" {
			t.Fatalf("sub-runs %+v, agent_end %v", subs, end)
		}
		var child apiclient.DialogDetail
		r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+subs[0].ID, e.key, "")
		if err := json.Unmarshal([]byte(r.body), &child); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, m := range child.Messages {
			kinds = append(kinds, m.Kind)
		}
		if got := strings.Join(kinds, " "); got != "user assistant tool_result assistant" || len(child.ToolCalls) != 1 || child.ParentDialogID != d {
			t.Fatalf("the sub-run's dialog has %q and %d tool calls (parent %q)", got, len(child.ToolCalls), child.ParentDialogID)
		}
		t.Run("a message to the sub-run's dialog is refused: only its call writes it", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+subs[0].ID+"/messages", e.key, `{"text":"hi"}`)
			if r.StatusCode != http.StatusConflict {
				t.Fatalf("message to a sub-run: %d %s", r.StatusCode, r.body)
			}
		})

		t.Run("the sub-run's usage is metered on its own bot", func(t *testing.T) {
			var report apiclient.UsageReport
			r := e.raw(t, "GET", "/v1/tenants/shop/usage?group_by=bot", e.key, "")
			if err := json.Unmarshal([]byte(r.body), &report); err != nil {
				t.Fatal(err)
			}
			bots := map[string]apiclient.UsageRow{}
			for _, row := range report.Usage {
				bots[row.Group] = row
			}
			researcher, _ := e.svc.Bots().Get(context.Background(), platform.Operator(), "shop", "researcher")
			concierge, _ := e.svc.Bots().Get(context.Background(), platform.Operator(), "shop", "concierge")
			if bots[researcher.ID].Turns != 2 || bots[researcher.ID].InputTokens == 0 || bots[concierge.ID].Turns != 2 {
				t.Fatalf("usage by bot: %+v", report.Usage)
			}
		})
		if m := e.raw(t, "GET", "/metrics", "", "").body; !strings.Contains(m, `parley_agent_runs_total{outcome="completed"} 1`) {
			t.Errorf("/metrics does not count the sub-run")
		}
	})
}

// nestedResults returns the tool results the sub-run at path reported.
func nestedResults(events []sseEvent, path string) []map[string]any {
	var out []map[string]any
	for _, ev := range events {
		if ev.typ == "tool_result" && ev.data["agent"] == path {
			out = append(out, ev.data)
		}
	}
	return out
}

func TestAgentCallsStopAtCyclesAndDepth(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		t.Run("A calling B calling A is a tool error B's model reads, and the dialog goes on", func(t *testing.T) {
			e.create(t, "bee", agentBot("Bee", `[]`, `{}`))
			e.create(t, "ay", agentBot("Ay", `[{"bot": "bee"}]`, `{}`))
			op := platform.Operator()
			v, _, err := e.svc.Versions().Create(context.Background(), op, "shop", "bee", []byte(agentBot("Bee", `[{"bot": "ay"}]`, `{}`)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Versions().Publish(context.Background(), op, "shop", "bee", v.Number); err != nil {
				t.Fatal(err)
			}
			d := e.dialogWith(t, "ay")
			e.llm.Enqueue(toolCall("bee", `{"input":"ask ay"}`), toolCall("ay", `{"input":"loop"}`),
				llmtest.ServerReply{Text: "Ay cannot be asked from here."}, llmtest.ServerReply{Text: "Done."})
			events := e.stream(t, d, "go")
			res := nestedResults(events, "bee")
			if len(res) != 1 || res[0]["is_error"] != true || !strings.Contains(res[0]["content"].(string), "already running in this chain") {
				t.Fatalf("bee's tool results: %v", res)
			}
			if last := events[len(events)-1]; last.typ != "done" || last.data["text"] != "Done." {
				t.Fatalf("last event %v", last)
			}
		})
		t.Run("a call deeper than max_agent_depth is a tool error", func(t *testing.T) {
			e.create(t, "leaf", agentBot("Leaf", `[]`, `{}`))
			e.create(t, "middle", agentBot("Middle", `[{"bot": "leaf"}]`, `{}`))
			e.create(t, "top", agentBot("Top", `[{"bot": "middle"}]`, `{"max_agent_depth": 1}`))
			d := e.dialogWith(t, "top")
			before := len(e.llm.Requests())
			e.llm.Enqueue(toolCall("middle", `{"input":"ask leaf"}`), toolCall("leaf", `{"input":"hi"}`),
				llmtest.ServerReply{Text: "Leaf is out of reach."}, llmtest.ServerReply{Text: "Done."})
			events := e.stream(t, d, "go")
			res := nestedResults(events, "middle")
			if len(res) != 1 || res[0]["is_error"] != true || !strings.Contains(res[0]["content"].(string), "at most 1 deep") {
				t.Fatalf("middle's tool results: %v", res)
			}
			if n := len(e.llm.Requests()) - before; n != 4 {
				t.Fatalf("the model got %d requests, want 4 (leaf never ran)", n)
			}
		})
		if m := e.raw(t, "GET", "/metrics", "", "").body; !strings.Contains(m, `parley_agent_runs_total{outcome="refused"} 2`) {
			t.Errorf("/metrics does not count the refused sub-runs")
		}
	})
}

func TestAgentsMustBeOtherBotsOfTheTenant(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		other := e.mustCreateTenant(t, "other")
		if r := e.raw(t, "POST", "/v1/tenants/other/bots", other, `{"slug": "vault", "config": `+agentBot("Vault", `[]`, `{}`)+`}`); r.StatusCode != http.StatusCreated {
			t.Fatalf("other tenant's bot: %d %s", r.StatusCode, r.body)
		}
		for _, tt := range []struct{ name, slug, agents, message string }{
			{"an unknown slug", "asker", `[{"bot": "ghost"}]`, `unknown bot "ghost"`},
			{"another tenant's bot", "asker", `[{"bot": "vault"}]`, `unknown bot "vault"`},
			{"the bot itself", "selfish", `[{"bot": "selfish"}]`, "is this bot"},
		} {
			t.Run(tt.name+" is refused with a pointer", func(t *testing.T) {
				r := e.raw(t, "POST", "/v1/tenants/shop/bots", e.key, `{"slug": "`+tt.slug+`", "config": `+agentBot("A", tt.agents, `{}`)+`}`)
				var body struct {
					Error apiclient.Error `json:"error"`
				}
				_ = json.Unmarshal([]byte(r.body), &body)
				if r.StatusCode != http.StatusUnprocessableEntity || len(body.Error.Details) != 1 ||
					body.Error.Details[0].Pointer != "/agents/0/bot" || !strings.Contains(body.Error.Details[0].Message, tt.message) {
					t.Fatalf("%d %s", r.StatusCode, r.body)
				}
			})
		}
	})
}

// A widget (pk_) caller is the end user: it sees that an agent ran, not
// what it did or answered, as with a hidden tool.
func TestEndUsersSeeThatAnAgentRanButNotItsWork(t *testing.T) {
	t.Parallel()
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		e.create(t, "researcher", researcherBot(e.shop.URL))
		e.create(t, "concierge", agentBot("Concierge", `[{"bot": "researcher"}]`, `{}`))
		pk, err := e.svc.APIKeys().Create(context.Background(), platform.Operator(), "shop",
			platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "concierge", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.raw(t, "POST", "/v1/tenants/shop/bots/concierge/dialogs", pk.Key, `{}`, "Origin", site)
		var d apiclient.Dialog
		if err := json.Unmarshal([]byte(r.body), &d); err != nil || r.StatusCode != http.StatusCreated {
			t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
		}
		e.llm.Enqueue(toolCall("researcher", `{"input":"stock of SKU-INTERNAL-7"}`), toolCall("check_stock", `{"item":"tent"}`),
			llmtest.ServerReply{Text: "Warehouse B holds 3."}, llmtest.ServerReply{Text: "It's in stock."})
		r = e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d.ID+"/messages", pk.Key, `{"text":"tent?"}`, "Origin", site, "Accept", "text/event-stream")
		mustHide(t, r.body, []string{"SKU-INTERNAL-7", "Warehouse B", "check_stock"})
		var types []string
		for _, ev := range readSSE(t, r.body) {
			if ev.data["agent"] != nil && ev.typ != "agent_start" && ev.typ != "agent_end" {
				t.Fatalf("the end user got the sub-run's %s event", ev.typ)
			}
			types = append(types, ev.typ)
		}
		if !slices.Contains(types, "agent_start") || !slices.Contains(types, "agent_end") {
			t.Fatalf("events %v: the end user should see that an agent ran", types)
		}
	})
}

// Two agents called in one answer run at once; each one's events carry
// its own path and both answers come back.
func TestParallelAgentCallsEachReportTheirOwnSubRun(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		e.create(t, "one", agentBot("One", `[]`, `{}`))
		e.create(t, "two", agentBot("Two", `[]`, `{}`))
		e.create(t, "both", agentBot("Both", `[{"bot": "one"}, {"bot": "two"}]`, `{"parallel_tool_calls": true}`))
		d := e.dialogWith(t, "both")
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "one", Arguments: `{"input":"a"}`}, {Name: "two", Arguments: `{"input":"b"}`}}},
			llmtest.ServerReply{Text: "first"}, llmtest.ServerReply{Text: "second"}, llmtest.ServerReply{Text: "both done"})
		events := e.stream(t, d, "go")
		ends := map[string]string{}
		for _, ev := range events {
			if ev.typ == "agent_end" {
				ends[ev.data["agent"].(string)] = ev.data["text"].(string)
			}
		}
		if len(ends) != 2 || ends["one"] == ends["two"] || !slices.Contains([]string{"first", "second"}, ends["one"]) || !slices.Contains([]string{"first", "second"}, ends["two"]) {
			t.Fatalf("agent_end texts %v", ends)
		}
		if last := events[len(events)-1]; last.typ != "done" || last.data["text"] != "both done" {
			t.Fatalf("last event %v", last)
		}
		if subs := e.subRuns(t, d); len(subs) != 2 {
			t.Fatalf("sub-runs %+v", subs)
		}
	})
}

// TestABotThatAnotherBotCallsCannotBeDeleted: deleting a bot that another
// bot's live config (published or canary) calls as an agent would break
// that bot's calls, so it is a conflict that names the callers, until
// they stop calling it.
func TestABotThatAnotherBotCallsCannotBeDeleted(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		cl := e.client(e.mustCreateTenant(t, "acme"))
		ctx := context.Background()
		create := func(slug, config string) {
			t.Helper()
			if _, err := cl.CreateBot(ctx, "acme", slug, json.RawMessage(config)); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.Publish(ctx, "acme", slug, 1); err != nil {
				t.Fatal(err)
			}
		}
		version := func(slug, config string) int {
			t.Helper()
			v, err := cl.CreateVersion(ctx, "acme", slug, json.RawMessage(config))
			if err != nil {
				t.Fatal(err)
			}
			return v.Number
		}
		refused := func(t *testing.T, slug, message string) {
			t.Helper()
			err := cl.DeleteBot(ctx, "acme", slug)
			if e := apiError(t, err, apiclient.CodeConflict); e.Message != message {
				t.Errorf("message = %q, want %q", e.Message, message)
			}
			if _, err := cl.GetBot(ctx, "acme", slug); err != nil {
				t.Errorf("the bot is gone: %v", err)
			}
		}
		alone := agentBot("Alone", `[]`, `{}`)
		create("support", agentBot("Support", `[]`, `{}`))
		create("triage", agentBot("Triage", `[{"bot": "support"}]`, `{}`))
		create("sales", alone)

		t.Run("a bot a published version calls is refused with its callers", func(t *testing.T) {
			refused(t, "support", "bot support is used as an agent by: triage (v1)")
		})
		t.Run("a bot a canary calls is refused too", func(t *testing.T) {
			n := version("sales", agentBot("Sales", `[{"bot": "support"}]`, `{}`))
			if _, err := cl.SetCanary(ctx, "acme", "sales", n, 10); err != nil {
				t.Fatal(err)
			}
			refused(t, "support", "bot support is used as an agent by: sales (canary v2), triage (v1)")
		})
		t.Run("a draft that calls it does not hold it", func(t *testing.T) {
			if _, err := cl.PromoteCanary(ctx, "acme", "sales"); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.Publish(ctx, "acme", "triage", version("triage", alone)); err != nil {
				t.Fatal(err)
			}
			version("triage", agentBot("Triage", `[{"bot": "support"}]`, `{}`)) // saved, not published
			refused(t, "support", "bot support is used as an agent by: sales (v2)")
		})
		t.Run("once no live config calls it, it is deleted", func(t *testing.T) {
			if _, err := cl.Publish(ctx, "acme", "sales", 1); err != nil {
				t.Fatal(err)
			}
			if err := cl.DeleteBot(ctx, "acme", "support"); err != nil {
				t.Fatal(err)
			}
		})
	})
}
