package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/anthropic"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

func TestFakeLLMServesTheScriptThenEchoes(t *testing.T) {
	script := filepath.Join(t.TempDir(), "replies.json")
	if err := os.WriteFile(script, []byte(`[{"text": "scripted hello", "usage": {"input_tokens": 3, "output_tokens": 2}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	replies, err := loadScript(script)
	if err != nil {
		t.Fatalf("loadScript: %v", err)
	}
	fake := llmtest.NewHandler(llmtest.Options{Handler: echo})
	fake.Enqueue(replies...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, fake) }()

	p, err := openai.New(openai.Config{BaseURL: "http://" + ln.Addr().String() + "/v1", APIKey: "any"})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Model: "fake-model", Messages: []llm.Message{llm.UserText("ping")}}
	for _, want := range []string{"scripted hello", "You said: ping"} {
		resp, err := p.Stream(context.Background(), req, nil)
		if err != nil || resp.Message.Text() != want {
			t.Fatalf("reply = %v, %v; want %q", resp, err, want)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve returned %v after shutdown", err)
	}
}

func TestLoadScriptRejectsTypos(t *testing.T) {
	script := filepath.Join(t.TempDir(), "replies.json")
	if err := os.WriteFile(script, []byte(`[{"txet": "hi"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadScript(script); err == nil || !strings.Contains(err.Error(), "txet") {
		t.Fatalf("loadScript = %v; want an error naming the unknown field", err)
	}
}

func TestFakeLLMEchoesOverTheAnthropicRouteToo(t *testing.T) {
	fake := llmtest.NewHandler(llmtest.Options{Handler: echo, MessagesHandler: echoMessages})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go serve(ctx, ln, fake)
	p, err := anthropic.New(anthropic.Config{BaseURL: "http://" + ln.Addr().String(), APIKey: "any", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), &llm.Request{Model: "fake-model", Messages: []llm.Message{llm.UserText("ping")}}, nil)
	if err != nil || resp.Message.Text() != "You said: ping" {
		t.Fatalf("reply = %v, %v", resp, err)
	}
}

func TestFakeLLMSearchesAndCitesAKnowledgeBase(t *testing.T) {
	search := llm.ToolDefinition{Name: "search_knowledge", Description: "Search", Parameters: []byte(`{"type":"object","properties":{"query":{"type":"string"}}}`)}
	fake := llmtest.NewHandler(llmtest.Options{Handler: echo})
	srv := httptestServer(t, fake)
	p, err := openai.New(openai.Config{BaseURL: srv + "/v1", APIKey: "any"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Run("with search_knowledge offered, the user's text is searched", func(t *testing.T) {
		resp, err := p.Stream(ctx, &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("refund time")}, Tools: []llm.ToolDefinition{search}}, nil)
		if err != nil || len(resp.Message.ToolUses()) != 1 || resp.Message.ToolUses()[0].Name != "search_knowledge" ||
			string(resp.Message.ToolUses()[0].Arguments) != `{"query":"refund time"}` {
			t.Fatalf("reply %+v, %v", resp, err)
		}
		call := resp.Message.ToolUses()[0]
		msgs := []llm.Message{llm.UserText("refund time"), resp.Message,
			llm.ToolResultMessage(llm.ToolResult{ToolUseID: call.ID, Name: call.Name,
				Content: "[1] Refunds (Policies) https://help.example/refunds\nRefunds take five days.\n\n[2] Other\nNo."})}
		resp, err = p.Stream(ctx, &llm.Request{Model: "m", Messages: msgs, Tools: []llm.ToolDefinition{search}}, nil)
		if err != nil || resp.Message.Text() != "From the knowledge base: Refunds take five days. [1]" {
			t.Fatalf("answer %q, %v", resp.Message.Text(), err)
		}
	})
	t.Run("auto mode's passages in the system prompt are cited", func(t *testing.T) {
		resp, err := p.Stream(ctx, &llm.Request{Model: "m", System: "You help.\n\n## Knowledge base passages\nFound for the user's latest message.\n\n[1] Plans\nPlan A costs 10 euros.\n",
			Messages: []llm.Message{llm.UserText("price?")}}, nil)
		if err != nil || resp.Message.Text() != "From the knowledge base: Plan A costs 10 euros. [1]" {
			t.Fatalf("answer %q, %v", resp.Message.Text(), err)
		}
	})
}

// httptestServer serves h on loopback until the test ends and returns its URL.
func httptestServer(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, h) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}
