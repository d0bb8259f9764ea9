package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
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
