package bottest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/botrun"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

// Options tune a run.
type Options struct {
	// Live, when set, answers with a real model instead of the scripts.
	Live agent.ProviderResolver
	// Natives resolves the bot's native tools; nil means builtin.NewRegistry().
	Natives *builtin.Registry
	// Knowledge searches the bot's knowledge bases in tests that supply no
	// passages (the server's search); nil finds nothing.
	Knowledge KnowledgeSearch
}

// Result is one test's outcome.
type Result struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Failures say what did not hold, each naming its turn.
	Failures   []string `json:"failures,omitempty"`
	DurationMS int64    `json:"duration_ms"`
}

// Failed returns the results that did not pass.
func Failed(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if !r.Passed {
			out = append(out, r)
		}
	}
	return out
}

// Run runs every test of the suite against bot, one fresh dialog each.
func Run(ctx context.Context, bot *botconfig.Bot, s *Suite, opts Options) []Result {
	if opts.Natives == nil {
		opts.Natives = builtin.NewRegistry()
	}
	results := make([]Result, 0, len(s.Tests))
	for _, c := range s.Tests {
		start := time.Now()
		fails := runCase(ctx, bot, s, c, opts)
		results = append(results, Result{Name: c.Name, Passed: len(fails) == 0, Failures: fails, DurationMS: time.Since(start).Milliseconds()})
	}
	return results
}

// runCase runs one conversation and returns what failed.
func runCase(ctx context.Context, bot *botconfig.Bot, s *Suite, c Case, opts Options) []string {
	fail := &failures{}
	fixtures := map[string]Fixture{}
	for k, v := range s.Fixtures {
		fixtures[k] = v
	}
	for k, v := range c.Fixtures {
		fixtures[k] = v
	}
	vars, err := caseVars(bot, c.Vars)
	if err != nil {
		return []string{err.Error()}
	}
	passages := s.Knowledge
	if c.Knowledge != nil {
		passages = c.Knowledge
	}
	kn := newTestKnowledge(bot, passages, opts.Knowledge)
	tools, err := buildTools(bot, fixtures, opts.Natives, builtin.Env{Knowledge: knowledgeTool(kn)}, fail)
	if err != nil {
		return []string{err.Error()}
	}
	script := llmtest.NewScripted()
	resolver := opts.Live
	if resolver == nil {
		model := bot.LLM.Model
		if model == "" {
			model = "scripted"
		}
		resolver = agent.Models(script, 128000, model)
	}
	rec := &recorder{}
	cfg := botrun.Config(bot, vars, resolver, tools) // as dialogs do
	cfg.Sink = rec
	cfg.Hooks.OnError = func(_ context.Context, err error) { rec.err = err }
	if kn != nil && bot.Knowledge.Mode == botconfig.KnowledgeModeAuto {
		cfg.Hooks.BeforeModelCall = kn.beforeModelCall
	}
	a, err := agent.New(cfg)
	if err != nil {
		return []string{err.Error()}
	}
	var st agent.State
	for i, t := range c.Turns {
		label := fmt.Sprintf("turn %d", i+1)
		if opts.Live == nil {
			script.Add(scriptReplies(t.Model)...)
		}
		rec.reset()
		if kn != nil {
			kn.retrieved = nil
		}
		out, _ := a.Send(ctx, &st, t.User)
		out = approvePending(ctx, a, &st, out)
		for _, f := range fail.take() {
			rec.fails = append(rec.fails, label+": "+f)
		}
		if opts.Live == nil {
			if err := script.Err(); err != nil && !rec.scriptFailed {
				rec.scriptFailed = true
				rec.fails = append(rec.fails, fmt.Sprintf("%s: the scripted model refused the conversation: %v", label, err))
			}
			if n := script.Remaining(); n > 0 {
				rec.fails = append(rec.fails, fmt.Sprintf("%s: %d scripted model replies were not used; the loop ended with %s", label, n, out.StopReason))
				return rec.fails
			}
		}
		if out.StopReason == agent.StopError && t.Expect.StopReason != string(agent.StopError) && rec.err != nil {
			rec.fails = append(rec.fails, fmt.Sprintf("%s: the run failed: %v", label, rec.err))
		}
		for _, f := range append(check(t.Expect, out, rec.calls), checkKnowledge(t.Expect, kn, out.Text)...) {
			rec.fails = append(rec.fails, label+": "+f)
		}
	}
	return rec.fails
}

// approvePending approves every confirmation a run waits for: tests check
// what the bot does, and fixture tools are never client-executed.
func approvePending(ctx context.Context, a *agent.Agent, st *agent.State, out agent.Outcome) agent.Outcome {
	for out.StopReason == agent.StopPaused && len(st.Pending) > 0 && ctx.Err() == nil {
		p := st.Pending[0]
		if p.Kind != agent.PendingConfirmation {
			break
		}
		out, _ = a.Confirm(ctx, st, p.ID, true)
	}
	return out
}

func scriptReplies(model []ModelReply) []llmtest.Reply {
	replies := make([]llmtest.Reply, 0, len(model))
	for _, m := range model {
		r := llmtest.Reply{Text: m.Text}
		for _, c := range m.ToolCalls {
			args := c.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			r.ToolCalls = append(r.ToolCalls, llm.ToolUse{Name: c.Name, Arguments: args})
		}
		replies = append(replies, r)
	}
	return replies
}

// caseVars fills the system variables of a test dialog, then the test's
// context variables, which must be declared by the bot.
func caseVars(bot *botconfig.Bot, given map[string]string) (botconfig.Vars, error) {
	vars := botconfig.Vars{
		"dialog_id": "test", "tenant_id": "test", "bot_id": bot.ChatbotID, "chatbot_id": bot.ChatbotID,
		"user_id": "test", "channel": "test", "locale": "en", "now": time.Now().UTC().Format(time.RFC3339),
	}
	declared := map[string]bool{}
	for _, cv := range bot.ContextVariables {
		declared[cv.Name] = true
	}
	for _, name := range botconfig.SystemVariables() {
		declared[name] = true
	}
	for _, k := range sortedKeys(given) {
		if !declared[k] {
			return nil, fmt.Errorf("vars: the bot declares no context variable %q", k)
		}
		vars[k] = given[k]
	}
	return vars, nil
}

// recorder keeps what one turn did.
type recorder struct {
	calls        []agent.ToolCall
	err          error
	fails        []string
	scriptFailed bool
}

func (r *recorder) reset() { r.calls, r.err = nil, nil }

// Send implements agent.Sink.
func (r *recorder) Send(e agent.Event) {
	if c, ok := e.(agent.ToolCall); ok {
		r.calls = append(r.calls, c)
	}
}

// check compares a turn's outcome with its expectations.
func check(e Expect, out agent.Outcome, calls []agent.ToolCall) []string {
	var fails []string
	if e.StopReason != "" && string(out.StopReason) != e.StopReason {
		fails = append(fails, fmt.Sprintf("stop reason is %q, want %q", out.StopReason, e.StopReason))
	}
	if e.Handoff != nil && (out.StopReason == agent.StopHandoff) != *e.Handoff {
		if *e.Handoff {
			fails = append(fails, fmt.Sprintf("the bot did not hand off (stop reason %q)", out.StopReason))
		} else {
			fails = append(fails, "the bot handed the dialog to a human")
		}
	}
	for _, want := range e.ReplyContains {
		if !strings.Contains(out.Text, want) {
			fails = append(fails, fmt.Sprintf("reply does not contain %q: %q", want, out.Text))
		}
	}
	for _, re := range e.ReplyMatches {
		if !regexp.MustCompile(re).MatchString(out.Text) {
			fails = append(fails, fmt.Sprintf("reply does not match /%s/: %q", re, out.Text))
		}
	}
	if e.ToolCalls != nil {
		fails = append(fails, checkCalls(*e.ToolCalls, calls)...)
	}
	return fails
}

// checkCalls finds the expected calls in order among the actual ones.
func checkCalls(want []ExpectCall, got []agent.ToolCall) []string {
	if len(want) == 0 && len(got) > 0 {
		return []string{fmt.Sprintf("want no tool calls, got %s", describeCalls(got))}
	}
	next := 0
	for _, w := range want {
		found := false
		for next < len(got) {
			g := got[next]
			next++
			if g.Name == w.Name && subset(w.Arguments, g.Arguments) {
				found = true
				break
			}
		}
		if !found {
			args := ""
			if len(w.Arguments) > 0 {
				args = " " + compact(w.Arguments)
			}
			return []string{fmt.Sprintf("want a call to %s%s in order, got %s", w.Name, args, describeCalls(got))}
		}
	}
	return nil
}

func describeCalls(calls []agent.ToolCall) string {
	if len(calls) == 0 {
		return "no tool calls"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.Name + " " + compact(c.Arguments)
	}
	return strings.Join(parts, ", ")
}

// subset reports whether want is contained in got: objects key by key
// (recursively), everything else equal as JSON values.
func subset(want, got json.RawMessage) bool {
	if len(bytes.TrimSpace(want)) == 0 {
		return true
	}
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return false
	}
	return contains(w, g)
}

func contains(want, got any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		return bytes.Equal(wb, gb)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range wm {
		gv, ok := gm[k]
		if !ok || !contains(v, gv) {
			return false
		}
	}
	return true
}
