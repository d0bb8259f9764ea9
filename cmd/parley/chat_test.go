package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

const chatTestConfig = `{
  "basic_settings": {"name": "Chat Test Bot", "greeting": "Hi! Ask me anything."},
  "native_tools": ["current_time", "remember", "recall"],
  "llm": {"model": "gpt-4o-mini"}
}`

// chatRun runs parley chat in-process against a fake LLM server.
func chatRun(t *testing.T, srv *llmtest.Server, config, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bot.json")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PARLEY_LLM_BASE_URL": srv.URL(), "PARLEY_LLM_API_KEY": "sk-chat-test"}
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
	code = m.Run(context.Background(), append([]string{"chat", "--config", path}, args...))
	return code, out.String(), errOut.String()
}

func TestChatJSONRunsAToolConversationFromStdin(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-chat-test"})
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{
			{ID: "c1", Name: "remember", Arguments: `{"key":"order","value":"42"}`},
			{ID: "c2", Name: "current_time", Arguments: `{}`},
		}},
		llmtest.ServerReply{Text: "Noted order 42."},
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c3", Name: "recall", Arguments: `{"key":"order"}`}}},
		llmtest.ServerReply{Text: "Your order is 42."},
	)
	code, stdout, stderr := chatRun(t, srv, chatTestConfig, "Remember order 42, and what time is it?\n\nWhich order was it?\n", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var types []string
	results := map[string]string{}
	var dones []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		typ := ev["type"].(string)
		if typ != "text_delta" {
			types = append(types, typ)
		}
		switch typ {
		case "tool_result":
			if ev["is_error"].(bool) {
				t.Fatalf("tool failed: %s", line)
			}
			results[ev["id"].(string)] = ev["content"].(string)
		case "done":
			dones = append(dones, ev["text"].(string))
		}
	}
	want := "turn_start tool_call tool_call tool_result tool_result turn_end turn_start turn_end done " +
		"turn_start tool_call tool_result turn_end turn_start turn_end done"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if results["c1"] != `Saved note "order".` || results["c3"] != "42" || results["c2"] == "" {
		t.Fatalf("tool results = %v", results)
	}
	if len(dones) != 2 || dones[1] != "Your order is 42." {
		t.Fatalf("done texts = %q", dones)
	}
	if srv.Pending() != 0 {
		t.Fatalf("%d replies unused", srv.Pending())
	}
	first := srv.Requests()[0].Request
	if len(first.Tools) != 3 || !strings.Contains(string(first.Messages[0].Content), "Chat Test Bot") {
		t.Fatalf("first request: %d tools, system %s", len(first.Tools), first.Messages[0].Content)
	}
}

func TestChatPrintsTheConversation(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-chat-test"})
	srv.Enqueue(llmtest.ServerReply{Text: "It is noon."})
	code, stdout, stderr := chatRun(t, srv, chatTestConfig, "what time is it?\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "Hi! Ask me anything.\nIt is noon.\n" {
		t.Fatalf("stdout = %q", stdout)
	}
	if strings.Contains(stdout+stderr, "sk-chat-test") {
		t.Fatal("the API key was printed")
	}
}

func TestChatRefusesBadInput(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-chat-test"})
	tests := []struct {
		name     string
		config   string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"an invalid config names the pointer", `{"basic_settings": {"name": ""}}`, nil, 1, "/basic_settings/name"},
		{"a malformed --var is a usage error", chatTestConfig, []string{"--var", "novalue"}, 2, "NAME=VALUE"},
		{"a --var the config does not declare is refused", chatTestConfig, []string{"--var", "tier=gold"}, 2, `declares no context variable "tier"`},
		{"a required context variable must be given", `{"basic_settings": {"name": "T"},
		  "context_variables": [{"name": "tier", "description": "the plan", "required": true}]}`, nil, 2, "requires --var tier=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := chatRun(t, srv, tt.config, "", tt.args...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
}

// chatTestTool is a Go tool that needs a confirmation or runs on the client.
type chatTestTool struct {
	name    string
	confirm bool
	client  bool
	calls   int
}

func (c *chatTestTool) Definition() tool.Definition {
	return tool.Definition{Name: c.name, Description: c.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (c *chatTestTool) Call(context.Context, json.RawMessage) (tool.Result, error) {
	c.calls++
	return tool.Result{Content: c.name + " done"}, nil
}

func (c *chatTestTool) RequiresConfirmation() bool { return c.confirm }
func (c *chatTestTool) ClientExecuted() bool       { return c.client }

func TestChatAsksOnStdinForConfirmationsAndClientResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		answer   string
		wantPaid int
		wantSeen string
	}{
		{"yes runs the confirmed tool", "y", 1, "pay done"},
		{"no tells the model the user declined", "n", 0, "declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pay := &chatTestTool{name: "pay", confirm: true}
			locate := &chatTestTool{name: "locate", client: true}
			set, err := tool.NewSet(nil, pay, locate)
			if err != nil {
				t.Fatal(err)
			}
			model := llmtest.NewScripted(
				llmtest.Calls(llmtest.Call("p1", "pay", `{"amount":5}`)),
				llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("g1", "locate", `{}`)}, Check: func(r *llm.Request) error {
					if res := r.Messages[len(r.Messages)-1].ToolResult(); res == nil || !strings.Contains(res.Content, tt.wantSeen) {
						t.Errorf("the model saw %+v, want %q", r.Messages[len(r.Messages)-1], tt.wantSeen)
					}
					return nil
				}},
				llmtest.Reply{Text: "All done; you are in Oslo.", Check: func(r *llm.Request) error {
					if res := r.Messages[len(r.Messages)-1].ToolResult(); res == nil || res.Content != `{"city":"Oslo"}` {
						t.Errorf("the client result did not reach the model: %+v", r.Messages[len(r.Messages)-1])
					}
					return nil
				}},
			)
			var out, errOut bytes.Buffer
			m := &Main{Stdin: strings.NewReader("pay 5 please\n" + tt.answer + "\n{\"city\":\"Oslo\"}\n"), Stdout: &out, Stderr: &errOut}
			c := &chatSession{m: m, in: bufio.NewScanner(m.Stdin)}
			a, err := agent.New(agent.Config{Resolver: agent.Models(model, 0, "m"), Tools: set, Sink: c})
			if err != nil {
				t.Fatal(err)
			}
			c.agent = a
			if err := c.run(context.Background(), &botconfig.Bot{}); err != nil {
				t.Fatal(err)
			}
			if err := model.Err(); err != nil || model.Remaining() != 0 {
				t.Fatalf("model: %v, %d replies left", err, model.Remaining())
			}
			if pay.calls != tt.wantPaid || locate.calls != 0 {
				t.Fatalf("pay ran %d times, locate %d; want %d and 0 (clients run their own tools)", pay.calls, locate.calls, tt.wantPaid)
			}
			if out.String() != "All done; you are in Oslo.\n" {
				t.Fatalf("stdout = %q", out.String())
			}
			if !strings.Contains(errOut.String(), `Run pay {"amount":5}? [y/N]`) || !strings.Contains(errOut.String(), "Client tool locate {}") {
				t.Fatalf("stderr did not ask: %q", errOut.String())
			}
		})
	}
}

func TestChatRunsConfigHTTPToolsWithSecretsAfterConfirmation(t *testing.T) {
	t.Parallel()
	var got []string
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(body)+" "+r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"saved"}`)
	}))
	defer crm.Close()
	port := crm.URL[strings.LastIndex(crm.URL, ":")+1:]
	config := `{
  "basic_settings": {"name": "CRM Bot"},
  "tools": [{"name": "save_contact", "description": "Save a contact",
    "parameters": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
    "endpoint": {"url": "` + crm.URL + `/contacts/<email>", "method": "POST",
      "headers": {"Authorization": "Bearer {{secrets.crm_token}}"}, "body": {"email": "<email>"}},
    "requires_confirmation": true}],
  "native_tools": ["current_time"]
}`
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-chat-test"})
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "s1", Name: "save_contact", Arguments: `{"email":"ann@example.com"}`}}},
		llmtest.ServerReply{Text: "Saved Ann."},
	)
	path := filepath.Join(t.TempDir(), "bot.json")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PARLEY_LLM_BASE_URL": srv.URL(), "PARLEY_LLM_API_KEY": "sk-chat-test",
		"PARLEY_OUTBOUND_ALLOW": "127.0.0.1/32", "PARLEY_OUTBOUND_PORTS": port}
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader("save ann@example.com\ny\n"), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
	code := m.Run(context.Background(), []string{"chat", "--config", path, "--json", "--secret", "crm_token=tok-secret-123"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if len(got) != 1 || got[0] != `POST /contacts/ann@example.com {"email":"ann@example.com"} Bearer tok-secret-123` {
		t.Fatalf("the CRM saw %q", got)
	}
	stdout := out.String()
	for _, want := range []string{`"type":"confirmation_request","id":"s1"`, `"type":"tool_result","id":"s1","name":"save_contact","is_error":false`, `"text":"Saved Ann."`} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("stdout lacks %s:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+errOut.String(), "tok-secret-123") {
		t.Fatal("a secret was printed")
	}
}

func TestChatExitsNonZeroWhenAReplyFailed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-chat-test"})
	srv.Enqueue(llmtest.ServerReply{Text: "fine"})
	// The second request finds no scripted reply: the fake answers 400.
	code, _, stderr := chatRun(t, srv, chatTestConfig, "hello\nagain\n")
	if code != 1 {
		t.Errorf("exit %d, want 1 after a failed reply; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "error detail:") {
		t.Errorf("the operator sees no detail of the failure:\n%s", stderr)
	}
	srv.Enqueue(llmtest.ServerReply{Text: "fine"})
	if code, _, stderr := chatRun(t, srv, chatTestConfig, "hello\n"); code != 0 {
		t.Errorf("exit %d after a good conversation: %s", code, stderr)
	}
}
