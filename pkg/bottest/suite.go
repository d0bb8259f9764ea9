package bottest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// Suite is one bot's test file.
type Suite struct {
	// Schema is the editor hint "$schema"; ignored.
	Schema string `json:"$schema,omitempty"`
	// Fixtures answer tool calls in every test; a test's own fixtures win.
	Fixtures map[string]Fixture `json:"fixtures,omitempty"`
	// Knowledge is what the bot's knowledge searches find in every test;
	// a test's own wins.
	Knowledge []Passage `json:"knowledge,omitempty"`
	Tests     []Case    `json:"tests"`
}

// Case is one conversation.
type Case struct {
	Name string `json:"name"`
	// Vars are the dialog's context variables.
	Vars     map[string]string  `json:"vars,omitempty"`
	Fixtures map[string]Fixture `json:"fixtures,omitempty"`
	// Knowledge is what the bot's knowledge searches find in this test.
	Knowledge []Passage `json:"knowledge,omitempty"`
	Turns     []Turn    `json:"turns"`
}

// Fixture is what a tool answers in a test, instead of calling anything.
type Fixture struct {
	// Result is the tool's content: a string as is, other JSON as its text.
	Result json.RawMessage `json:"result"`
	// IsError marks the result as a tool failure.
	IsError bool `json:"is_error,omitempty"`
	// Parameters is the JSON Schema of an MCP tool's arguments (MCP tools
	// are listed by their servers, which tests never reach); default: any
	// object.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// Turn is one user message, what the scripted model answers to it, and what
// must hold afterwards.
type Turn struct {
	User string `json:"user"`
	// Model scripts the model's answers for this turn, in order; ignored
	// with a live model.
	Model  []ModelReply `json:"model,omitempty"`
	Expect Expect       `json:"expect"`
}

// ModelReply is one scripted model answer: tool calls, text, or both.
type ModelReply struct {
	Text      string       `json:"text,omitempty"`
	ToolCalls []ToolCallIn `json:"tool_calls,omitempty"`
}

// ToolCallIn is a tool call the scripted model makes.
type ToolCallIn struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Expect is what must hold after a turn. Absent fields are not checked.
type Expect struct {
	// ToolCalls must appear in this order among the turn's calls (others
	// may come between); an empty list means no tool was called.
	ToolCalls *[]ExpectCall `json:"tool_calls,omitempty"`
	// ReplyContains are substrings the final reply must contain.
	ReplyContains []string `json:"reply_contains,omitempty"`
	// ReplyMatches are regular expressions (Go syntax) the reply must match.
	ReplyMatches []string `json:"reply_matches,omitempty"`
	// StopReason is the run's stop reason (docs/events.md).
	StopReason string `json:"stop_reason,omitempty"`
	// Handoff says whether the turn handed the dialog to a human.
	Handoff *bool `json:"handoff,omitempty"`
	// Retrieved are titles of knowledge sources the turn's searches must
	// have found; Cited those the reply must cite with [n]. An empty list
	// means none.
	Retrieved *[]string `json:"retrieved,omitempty"`
	Cited     *[]string `json:"cited,omitempty"`
}

// ExpectCall is an expected tool call: its name and a subset of its
// arguments (objects compared key by key, other values exactly).
type ExpectCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// stopReasons are the values an expectation may name.
var stopReasons = map[string]bool{"completed": true, "max_turns": true, "token_budget": true, "timeout": true,
	"loop_detected": true, "too_many_errors": true, "paused": true, "handoff": true, "quota": true, "error": true, "guardrail": true}

// Parse decodes and checks a test file. Unknown fields are errors, and every
// problem is returned at once with its JSON pointer.
func Parse(data []byte) (*Suite, error) {
	var s Suite
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, botconfig.Problems{{Pointer: "", Message: "not a valid test file: " + err.Error()}}
	}
	if p := s.check(); len(p) > 0 {
		return nil, p
	}
	return &s, nil
}

func (s *Suite) check() botconfig.Problems {
	var p botconfig.Problems
	add := func(ptr, format string, args ...any) {
		p = append(p, botconfig.Problem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	checkFixtures(s.Fixtures, "/fixtures", add)
	checkPassages(s.Knowledge, "/knowledge", add)
	if len(s.Tests) == 0 {
		add("/tests", "a test file needs at least one test")
	}
	names := map[string]bool{}
	for i, c := range s.Tests {
		at := fmt.Sprintf("/tests/%d", i)
		if strings.TrimSpace(c.Name) == "" {
			add(at+"/name", "every test needs a name")
		} else if names[c.Name] {
			add(at+"/name", "test name %q is used twice", c.Name)
		}
		names[c.Name] = true
		checkFixtures(c.Fixtures, at+"/fixtures", add)
		checkPassages(c.Knowledge, at+"/knowledge", add)
		if len(c.Turns) == 0 {
			add(at+"/turns", "a test needs at least one turn")
		}
		for j, t := range c.Turns {
			t.check(fmt.Sprintf("%s/turns/%d", at, j), add)
		}
	}
	return p
}

// checkPassages wants a title (what retrieved and cited name) and a text
// of every passage.
func checkPassages(ps []Passage, at string, add func(string, string, ...any)) {
	for i, p := range ps {
		if strings.TrimSpace(p.Title) == "" {
			add(fmt.Sprintf("%s/%d/title", at, i), "a passage needs the title of its source")
		}
		if strings.TrimSpace(p.Text) == "" {
			add(fmt.Sprintf("%s/%d/text", at, i), "a passage needs its text")
		}
	}
}

func checkFixtures(fx map[string]Fixture, at string, add func(string, string, ...any)) {
	for name, f := range fx {
		ptr := at + "/" + escapePointer(name)
		if len(bytes.TrimSpace(f.Result)) == 0 {
			add(ptr+"/result", "a fixture needs a result")
		}
		if len(f.Parameters) > 0 && !bytes.HasPrefix(bytes.TrimSpace(f.Parameters), []byte("{")) {
			add(ptr+"/parameters", "parameters must be a JSON Schema object")
		}
	}
}

func (t Turn) check(at string, add func(string, string, ...any)) {
	if strings.TrimSpace(t.User) == "" {
		add(at+"/user", "a turn needs the user's message")
	}
	for k, r := range t.Model {
		if r.Text == "" && len(r.ToolCalls) == 0 {
			add(fmt.Sprintf("%s/model/%d", at, k), "a model reply needs text or tool_calls")
		}
		for c, call := range r.ToolCalls {
			ptr := fmt.Sprintf("%s/model/%d/tool_calls/%d", at, k, c)
			if call.Name == "" {
				add(ptr+"/name", "a tool call needs a name")
			}
			if len(call.Arguments) > 0 && !isObject(call.Arguments) {
				add(ptr+"/arguments", "arguments must be a JSON object")
			}
		}
	}
	e := t.Expect
	if e.StopReason != "" && !stopReasons[e.StopReason] {
		add(at+"/expect/stop_reason", "unknown stop reason %q", e.StopReason)
	}
	for k, re := range e.ReplyMatches {
		if _, err := regexp.Compile(re); err != nil {
			add(fmt.Sprintf("%s/expect/reply_matches/%d", at, k), "not a regular expression: %v", err)
		}
	}
	if e.ToolCalls != nil {
		for k, c := range *e.ToolCalls {
			if c.Name == "" {
				add(fmt.Sprintf("%s/expect/tool_calls/%d/name", at, k), "an expected call needs a name")
			}
		}
	}
}

func isObject(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
}

// escapePointer escapes one JSON-pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
