package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

// goTool is a plain Go tool; the optional behaviours are switched by fields.
type goTool struct {
	name    string
	params  string
	fn      func(ctx context.Context, args json.RawMessage) (tool.Result, error)
	client  bool
	confirm bool
	keep    int
}

func (g *goTool) Definition() tool.Definition {
	params := g.params
	if params == "" {
		params = `{"type":"object","properties":{"q":{"type":"string"}}}`
	}
	return tool.Definition{Name: g.name, Description: "test tool " + g.name, Parameters: json.RawMessage(params)}
}

func (g *goTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	if g.fn == nil {
		return tool.Result{Content: g.name + " ok " + string(args)}, nil
	}
	return g.fn(ctx, args)
}

func (g *goTool) ClientExecuted() bool       { return g.client }
func (g *goTool) RequiresConfirmation() bool { return g.confirm }
func (g *goTool) KeepLast() int              { return g.keep }

// echo returns a tool answering "<name> ok <args>".
func echo(name string) *goTool { return &goTool{name: name} }

func toolSet(t testing.TB, tools ...tool.Tool) *tool.Set {
	t.Helper()
	set, err := tool.NewSet(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// recorder is a Sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) Send(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// types lists the event types in order, text deltas folded into one.
func (r *recorder) types() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type() == "text_delta" && len(out) > 0 && out[len(out)-1] == "text_delta" {
			continue
		}
		out = append(out, e.Type())
	}
	return strings.Join(out, " ")
}

func find[T agent.Event](r *recorder) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, e := range r.events {
		if v, ok := e.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// harness wires an agent to a scripted provider, a recorder and hooks that
// keep every persisted message.
type harness struct {
	t      *testing.T
	model  *llmtest.Scripted
	events *recorder
	saved  []agent.Message
	agent  *agent.Agent
	state  *agent.State
}

func newHarness(t *testing.T, cfg agent.Config, replies ...llmtest.Reply) *harness {
	t.Helper()
	h := &harness{t: t, model: llmtest.NewScripted(replies...), events: &recorder{}, state: &agent.State{}}
	if cfg.Resolver == nil {
		cfg.Resolver = agent.Models(h.model, 0, "test-model")
	}
	cfg.Sink = h.events
	if cfg.System == "" {
		cfg.System = "You are a test bot."
	}
	onMessage := cfg.Hooks.OnMessage
	cfg.Hooks.OnMessage = func(ctx context.Context, m agent.Message) error {
		h.saved = append(h.saved, m)
		if onMessage != nil {
			return onMessage(ctx, m)
		}
		return nil
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.agent = a
	return h
}

func (h *harness) send(text string) agent.Outcome {
	h.t.Helper()
	out, err := h.agent.Send(context.Background(), h.state, text)
	if err != nil && out.StopReason != agent.StopError {
		h.t.Fatalf("Send: err %v with stop reason %s", err, out.StopReason)
	}
	return out
}

// strict fails the test when the scripted model saw a request the real API
// would refuse, or when replies were left unused.
func (h *harness) strict() {
	h.t.Helper()
	if err := h.model.Err(); err != nil {
		h.t.Fatalf("the model saw invalid requests: %v", err)
	}
	if n := h.model.Remaining(); n != 0 {
		h.t.Fatalf("%d scripted replies were not used", n)
	}
}

// toolResults returns the tool results of the state in order as "id:content".
func toolResults(st *agent.State) []string {
	var out []string
	for _, m := range st.Messages {
		if r := m.ToolResult(); r != nil && m.Kind == agent.KindToolResult {
			out = append(out, fmt.Sprintf("%s:%s", r.ToolUseID, r.Content))
		}
	}
	return out
}

func roundTrip(t *testing.T, st *agent.State) *agent.State {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out agent.State
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

var errBoom = errors.New("database is down at 10.0.0.5")

func usage(in, out int) llm.Usage { return llm.Usage{InputTokens: in, OutputTokens: out} }
