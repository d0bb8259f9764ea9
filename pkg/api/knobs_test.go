package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// knobsBot is the shop's check_stock tool with the given runtime settings,
// on a model the catalog does not know (an 8192-token window).
func knobsBot(shopURL, runtime string) string {
	return `{"basic_settings": {"name": "Knobs"},
  "tools": [{"name": "check_stock", "description": "Check stock",
     "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
     "endpoint": {"url": "` + shopURL + `/stock/<item>", "method": "GET"}}],
  "llm": {"model": "knobs-test-model"}, "runtime": ` + runtime + `}`
}

// publishKnobs publishes the knobs bot with runtime and starts a dialog.
func (e *chatEnv) publishKnobs(t *testing.T, slug, runtime string) string {
	return e.publish(t, slug, knobsBot(e.shop.URL, runtime))
}

// publish saves and publishes config as the shop's bot slug and starts a
// dialog with it.
func (e *chatEnv) publish(t *testing.T, slug, config string) string {
	t.Helper()
	op := platform.Operator()
	if _, _, err := e.svc.Bots().Create(context.Background(), op, "shop", slug, []byte(config)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(context.Background(), op, "shop", slug, 1); err != nil {
		t.Fatal(err)
	}
	return e.dialogWith(t, slug)
}

// send posts a message and returns the final text of the turn.
func (e *chatEnv) send(t *testing.T, d, text string) string {
	t.Helper()
	r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text": "`+text+`"}`)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("message: %d %s", r.StatusCode, r.body)
	}
	var turn struct {
		Done struct {
			Text       string `json:"text"`
			StopReason string `json:"stop_reason"`
		} `json:"done"`
	}
	if err := json.Unmarshal([]byte(r.body), &turn); err != nil {
		t.Fatal(err)
	}
	return turn.Done.StopReason + ": " + turn.Done.Text
}

func TestTerminationSummaryIsTheConfigsChoice(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		stock := llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "check_stock", Arguments: `{"item":"tent"}`}}}
		t.Run("on by default: a run cut by max_turns ends with the model's closing answer", func(t *testing.T) {
			d := e.publishKnobs(t, "summary-on", `{"max_turns": 1}`)
			before := len(e.llm.Requests())
			e.llm.Enqueue(stock, llmtest.ServerReply{Text: "I checked the tent; ask again for more."})
			if got := e.send(t, d, "is the tent in stock?"); got != "max_turns: I checked the tent; ask again for more." {
				t.Fatalf("turn = %q", got)
			}
			reqs := e.llm.Requests()[before:]
			if len(reqs) != 2 || len(reqs[1].Request.Tools) != 0 {
				t.Fatalf("the model got %d requests, want the turn and a summary without tools", len(reqs))
			}
		})
		t.Run("termination_summary false: no extra model call", func(t *testing.T) {
			d := e.publishKnobs(t, "summary-off", `{"max_turns": 1, "termination_summary": false}`)
			before := len(e.llm.Requests())
			e.llm.Enqueue(stock)
			if got := e.send(t, d, "is the tent in stock?"); !strings.HasPrefix(got, "max_turns: ") || strings.Contains(got, "ask again") {
				t.Fatalf("turn = %q", got)
			}
			if n := len(e.llm.Requests()) - before; n != 1 {
				t.Fatalf("the model got %d requests, want 1", n)
			}
		})
	})
}

func TestCompactionFollowsTheConfig(t *testing.T) {
	t.Parallel()
	const prompt = "Write three bullet points for the next agent."
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		// A tiny threshold makes the second message compact the first.
		talk := func(t *testing.T, d string) []llmtest.Record {
			before := len(e.llm.Requests())
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "check_stock", Arguments: `{"item":"tent"}`}}},
				llmtest.ServerReply{Text: "The tent is in stock."})
			e.send(t, d, "is the tent in stock?")
			return e.llm.Requests()[before:]
		}
		t.Run("a summary prompt from the config is what the model is asked", func(t *testing.T) {
			d := e.publishKnobs(t, "compact-on", `{"compaction": {"threshold_ratio": 0.01, "keep_recent": 1, "summary_prompt": "`+prompt+`"}}`)
			talk(t, d)
			before := len(e.llm.Requests())
			e.llm.Enqueue(llmtest.ServerReply{Text: "- asked about the tent"}, llmtest.ServerReply{Text: "You're welcome."})
			if got := e.send(t, d, "thanks"); !strings.HasSuffix(got, "You're welcome.") {
				t.Fatalf("turn = %q", got)
			}
			reqs := e.llm.Requests()[before:]
			if len(reqs) != 2 {
				t.Fatalf("the model got %d requests, want the summary and the turn", len(reqs))
			}
			msgs := reqs[0].Request.Messages
			if last := msgs[len(msgs)-1].Text(); last != prompt || len(reqs[0].Request.Tools) != 0 {
				t.Fatalf("the summary request ends with %q (tools %d), want the config's prompt without tools", last, len(reqs[0].Request.Tools))
			}
			if first := reqs[1].Request.Messages[1].Text(); !strings.Contains(first, "- asked about the tent") {
				t.Fatalf("the turn after compaction starts with %q, want the summary", first)
			}
		})
		t.Run("compaction disabled never summarises", func(t *testing.T) {
			d := e.publishKnobs(t, "compact-off", `{"compaction": {"enabled": false, "threshold_ratio": 0.01, "keep_recent": 1}}`)
			talk(t, d)
			before := len(e.llm.Requests())
			e.llm.Enqueue(llmtest.ServerReply{Text: "You're welcome."})
			e.send(t, d, "thanks")
			if n := len(e.llm.Requests()) - before; n != 1 {
				t.Fatalf("the model got %d requests, want 1", n)
			}
		})
	})
}

func TestAnEphemeralNativeToolKeepsOnlyItsLatestOutput(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		config := `{"basic_settings": {"name": "Clock"}, "native_tools": [{"name": "current_time", "ephemeral": 1}], "llm": {"model": "gpt-4o-mini"}}`
		d := e.publish(t, "clock", config)
		now := llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "current_time", Arguments: `{}`}}}
		before := len(e.llm.Requests())
		e.llm.Enqueue(now, now, llmtest.ServerReply{Text: "It is late."})
		if got := e.send(t, d, "what time is it, twice?"); !strings.HasSuffix(got, "It is late.") {
			t.Fatalf("turn = %q", got)
		}
		reqs := e.llm.Requests()[before:]
		if len(reqs) != 3 {
			t.Fatalf("the model got %d requests, want 3", len(reqs))
		}
		var results []string
		for _, m := range reqs[2].Request.Messages {
			if m.Role == "tool" {
				results = append(results, m.Text())
			}
		}
		if len(results) != 2 || !strings.Contains(results[0], "output removed") || strings.Contains(results[1], "output removed") {
			t.Fatalf("tool results the model saw last = %q, want the older one replaced", results)
		}
	})
}

func TestIncludeDateTellsTheModelToday(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		config := `{"basic_settings": {"name": "Dated", "include_date": true, "timezone": "Pacific/Kiritimati"}, "llm": {"model": "gpt-4o-mini"}}`
		d := e.publish(t, "dated", config)
		zone, _ := time.LoadLocation("Pacific/Kiritimati")
		line := func(at time.Time) string {
			at = at.In(zone)
			return "Today's date: " + at.Weekday().String() + ", " + at.Format("2006-01-02") + " (time zone Pacific/Kiritimati)"
		}
		before := line(time.Now())
		e.llm.Enqueue(llmtest.ServerReply{Text: "Hi."})
		e.send(t, d, "what day is it?")
		after := line(time.Now())
		system := e.llm.LastRequest().Messages[0]
		if system.Role != "system" || !strings.Contains(system.Text(), before) && !strings.Contains(system.Text(), after) {
			t.Fatalf("the system prompt lacks %q:\n%s", after, system.Text())
		}
	})
}

func TestStrictToolsOfferPreparedSchemasAndReadNullAsLeftOut(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		config := `{"basic_settings": {"name": "Strict"},
  "tools": [{"name": "check_stock", "description": "Check stock",
     "parameters": {"type": "object", "properties": {"item": {"type": "string", "title": "Item", "minLength": 1},
       "store": {"type": "string", "description": "Store code"}}, "required": ["item"]},
     "endpoint": {"url": "` + e.shop.URL + `/stock/<item>", "method": "GET", "query_params": {"store": "<store>"}}}],
  "llm": {"model": "gpt-4o-mini", "strict_tools": true}}`
		d := e.publish(t, "strict", config)
		before := len(e.llm.Requests())
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "check_stock", Arguments: `{"item":"tent","store":null}`}}},
			llmtest.ServerReply{Text: "In stock."})
		if got := e.send(t, d, "is the tent in stock?"); !strings.HasSuffix(got, "In stock.") {
			t.Fatalf("turn = %q", got)
		}
		reqs := e.llm.Requests()[before:]
		fn := reqs[0].Request.Tools[0].Function
		want := `{"additionalProperties":false,"properties":{"item":{"type":"string"},"store":{"description":"Store code","type":["string","null"]}},"required":["item","store"],"type":"object"}`
		if fn.Strict == nil || !*fn.Strict || string(fn.Parameters) != want {
			t.Fatalf("the model was offered strict=%v %s\nwant strict %s", fn.Strict, fn.Parameters, want)
		}
		if n := e.shopCalls("GET /stock/tent"); n != 1 {
			t.Fatalf("the shop got %d stock calls, want 1 (a null store is left out, not refused)", n)
		}
		for _, m := range reqs[1].Request.Messages {
			if m.Role == "tool" && strings.Contains(m.Text(), "invalid") {
				t.Fatalf("the tool refused the arguments: %s", m.Text())
			}
		}
	})
}
