package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

// resumeIn builds a second agent, as another request or server instance
// would, over the same scripted model and a state that went through JSON.
func (h *harness) resumeIn(cfg agent.Config) (*agent.Agent, *agent.State) {
	h.t.Helper()
	cfg.Resolver = agent.Models(h.model, 0, "test-model")
	cfg.Sink = h.events
	a, err := agent.New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return a, roundTrip(h.t, h.state)
}

func TestClientToolsPauseAndResume(t *testing.T) {
	cfg := agent.Config{Tools: toolSet(t, &goTool{name: "get_location", client: true}, echo("weather"))}
	h := newHarness(t, cfg,
		llmtest.Calls(llmtest.Call("loc", "get_location", `{}`), llmtest.Call("w", "weather", `{"q":"here"}`)),
		llmtest.Reply{Text: "It is sunny in Oslo.", Check: func(r *llm.Request) error {
			for _, m := range r.Messages {
				if res := m.ToolResult(); res != nil && res.ToolUseID == "loc" && res.Content == `{"city":"Oslo"}` {
					return nil
				}
			}
			return errors.New("the client's result was not sent")
		}})
	out := h.send("weather here?")
	if out.StopReason != agent.StopPaused || len(out.Pending) != 1 || out.Pending[0].Kind != agent.PendingClient {
		t.Fatalf("outcome = %+v", out)
	}
	req := find[agent.ClientToolRequest](h.events)
	if len(req) != 1 || len(req[0].Calls) != 1 || req[0].Calls[0].ID != "loc" {
		t.Fatalf("client_tool_request = %+v", req)
	}
	if got := toolResults(h.state); len(got) != 1 || !strings.HasPrefix(got[0], "w:") {
		t.Fatalf("the server tool of the batch did not run before the pause: %v", got)
	}

	a, st := h.resumeIn(cfg)
	if _, err := a.SubmitToolResults(context.Background(), st, []agent.ClientResult{{ID: "nope"}}); !errors.Is(err, agent.ErrNotPending) {
		t.Fatalf("a result for no pending call: err = %v", err)
	}
	out, err := a.SubmitToolResults(context.Background(), st, []agent.ClientResult{{ID: "loc", Content: `{"city":"Oslo"}`}})
	if err != nil || out.StopReason != agent.StopCompleted || out.Text != "It is sunny in Oslo." || st.Paused() {
		t.Fatalf("resumed outcome = %+v, err %v", out, err)
	}
	if out.Turns != 2 {
		t.Fatalf("turns = %d, want the count to carry across the pause", out.Turns)
	}
	h.strict()
}

func TestConfirmations(t *testing.T) {
	ran := 0
	refund := &goTool{name: "refund", confirm: true, fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		ran++
		return tool.Result{Content: "refunded"}, nil
	}}
	tests := []struct {
		name     string
		approved bool
		wantRan  int
		want     string
	}{
		{"an approved call runs and its result goes to the model", true, 1, "refunded"},
		{"a declined call tells the model the user said no", false, 0, "The user declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = 0
			cfg := agent.Config{Tools: toolSet(t, refund)}
			h := newHarness(t, cfg, llmtest.Calls(llmtest.Call("r1", "refund", `{"q":"order 7"}`)),
				llmtest.Reply{Text: "Done.", Check: func(r *llm.Request) error {
					if res := r.Messages[len(r.Messages)-1].ToolResult(); res == nil || !strings.HasPrefix(res.Content, tt.want) {
						return fmt.Errorf("last message is not the expected result: %+v", r.Messages[len(r.Messages)-1])
					}
					return nil
				}})
			out := h.send("refund order 7")
			conf := find[agent.ConfirmationRequest](h.events)
			if out.StopReason != agent.StopPaused || len(conf) != 1 || conf[0].ID != "r1" || string(conf[0].Arguments) != `{"q":"order 7"}` {
				t.Fatalf("outcome %+v, confirmation_request %+v", out, conf)
			}
			if ran != 0 {
				t.Fatal("the tool ran before it was confirmed")
			}
			a, st := h.resumeIn(cfg)
			if _, err := a.SubmitToolResults(context.Background(), st, []agent.ClientResult{{ID: "r1"}}); !errors.Is(err, agent.ErrNotPending) {
				t.Fatalf("client results must not answer a confirmation: %v", err)
			}
			out, err := a.Confirm(context.Background(), st, "r1", tt.approved)
			if err != nil || out.StopReason != agent.StopCompleted || ran != tt.wantRan {
				t.Fatalf("outcome %+v, err %v, ran %d", out, err, ran)
			}
			h.strict()
		})
	}
}

func TestPartialResultsKeepTheRunPaused(t *testing.T) {
	cfg := agent.Config{Tools: toolSet(t, &goTool{name: "ask", client: true}, &goTool{name: "pay", confirm: true})}
	h := newHarness(t, cfg, llmtest.Calls(llmtest.Call("a", "ask", `{}`), llmtest.Call("p", "pay", `{}`)), llmtest.Text("thanks"))
	h.send("go")
	a, st := h.resumeIn(cfg)
	out, err := a.SubmitToolResults(context.Background(), st, []agent.ClientResult{{ID: "a", Content: "yes"}})
	if err != nil || out.StopReason != agent.StopPaused || len(st.Pending) != 1 || st.Pending[0].ID != "p" {
		t.Fatalf("after one of two: outcome %+v, err %v, pending %+v", out, err, st.Pending)
	}
	out, err = a.Confirm(context.Background(), st, "p", true)
	if err != nil || out.StopReason != agent.StopCompleted {
		t.Fatalf("after both: %+v, %v", out, err)
	}
	h.strict()
}

func TestSendWhilePausedGivesUpThePendingCalls(t *testing.T) {
	cfg := agent.Config{Tools: toolSet(t, &goTool{name: "pay", confirm: true})}
	h := newHarness(t, cfg, llmtest.Calls(llmtest.Call("p", "pay", `{}`)), llmtest.Text("No payment then."))
	h.send("pay")
	out := h.send("never mind")
	h.strict()
	if out.StopReason != agent.StopCompleted || h.state.Paused() {
		t.Fatalf("outcome %+v", out)
	}
	if got := toolResults(h.state); len(got) != 1 || !strings.Contains(got[0], "instead of answering") {
		t.Fatalf("results = %v", got)
	}
}

func TestStateSurvivesJSON(t *testing.T) {
	h := newHarness(t, agent.Config{Tools: toolSet(t, &goTool{name: "ask", client: true}, echo("lookup"))},
		llmtest.Calls(llmtest.Call("l", "lookup", `{"q":"1"}`)),
		llmtest.Reply{Text: "one moment", ToolCalls: []llm.ToolUse{llmtest.Call("a", "ask", `{"q":"size?"}`)}, Usage: usage(5, 6)})
	h.send("go")
	h.strict()
	back := roundTrip(t, h.state)
	// Times lose their monotonic reading in JSON; compare them apart.
	for i := range back.Messages {
		if !back.Messages[i].Time.Equal(h.state.Messages[i].Time) {
			t.Fatalf("message %d time changed", i)
		}
		back.Messages[i].Time = h.state.Messages[i].Time
	}
	if !reflect.DeepEqual(back, h.state) {
		t.Fatalf("state changed in JSON:\n got %+v\nwant %+v", back, h.state)
	}
}
