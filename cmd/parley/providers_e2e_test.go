package main

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// fallbackConfig is a bot on Claude that falls back to an OpenAI model.
const fallbackConfig = `{"basic_settings": {"name": "Claude", "greeting": "Hi"}, "native_tools": ["current_time"],
  "llm": {"provider": "anthropic", "model": "claude-sonnet-4-5", "thinking_budget": 1024, "max_tokens": 512,
          "fallbacks": [{"provider": "openai", "model": "gpt-4o-mini"}]}}`

// TestABotOnClaudeFallsOverToOpenAIOnAnOverload runs the real program with
// two providers, each a strict fake: Anthropic's answers a tool call
// (with thinking), then is overloaded (529, every retry too); the turn
// moves to the OpenAI-compatible fallback, which answers from the same
// conversation. Usage is metered per provider.
func TestABotOnClaudeFallsOverToOpenAIOnAnOverload(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		gpt := chatServer(t, env, llmtest.Options{FragmentSize: 4})
		claude := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-ant-e2e", FragmentSize: 4})
		env["PARLEY_ANTHROPIC_API_KEY"] = "sk-ant-e2e"
		env["PARLEY_ANTHROPIC_BASE_URL"] = claude.BaseURL()
		srv := startParley(t, env)
		ctx := context.Background()

		created, err := apiclient.New(srv.URL, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		key := created.APIKey.Key
		admin := apiclient.New(srv.URL, key)
		if _, err := admin.CreateBot(ctx, "acme", "echo", json.RawMessage(fallbackConfig)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Publish(ctx, "acme", "echo", 1); err != nil {
			t.Fatal(err)
		}
		d := newDialog(t, srv.URL, key)

		overloaded := llmtest.Overloaded()
		claude.Enqueue(
			llmtest.ServerReply{Thinking: "I need the time.", ToolCalls: []llmtest.ServerCall{{Name: "current_time", Arguments: `{}`}}},
			overloaded, overloaded, overloaded, // the first attempt and the provider's two retries
		)
		gpt.Enqueue(llmtest.ServerReply{Text: "It is noon."})

		resp := openStream(t, srv.URL, key, d, "What time is it?")
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var types []string
		var switched string
		for {
			typ, ok := nextEvent(sc)
			if !ok {
				break
			}
			if len(types) == 0 || types[len(types)-1] != typ {
				types = append(types, typ)
			}
			if typ == "provider_switch" && sc.Scan() {
				switched = sc.Text()
			}
		}
		joined := strings.Join(types, " ")
		for _, want := range []string{"thinking_delta", "tool_call", "tool_result", "provider_switch", "text_delta", "done"} {
			if !strings.Contains(joined, want) {
				t.Errorf("events %q lack %s", joined, want)
			}
		}
		if !strings.Contains(switched, `"from":"anthropic/claude-sonnet-4-5"`) || !strings.Contains(switched, `"to":"openai/gpt-4o-mini"`) {
			t.Errorf("provider_switch = %s", switched)
		}
		if m := dialogMessages(t, srv.URL, key, d); len(m) == 0 || m[len(m)-1] != "assistant:complete:It is noon." {
			t.Fatalf("messages %q", m)
		}

		// Both fakes accepted what they were sent; OpenAI's saw the tool
		// call Claude made and its result, without Claude's thinking.
		for _, r := range claude.Requests() {
			if r.Status != 200 && r.Status != 529 {
				t.Errorf("the Anthropic fake refused a request (%d): %s", r.Status, r.Body)
			}
		}
		last := gpt.LastRequest()
		if gpt.Requests()[0].Status != 200 || last == nil || len(last.Messages) != 4 || last.Messages[3].Role != "tool" {
			t.Fatalf("the OpenAI fake saw %+v", last)
		}

		report, err := admin.Usage(ctx, "acme", "", "", "provider")
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]apiclient.UsageRow{}
		for _, u := range report.Usage {
			by[u.Group] = u
		}
		if len(by) != 2 || by["anthropic"].InputTokens == 0 || by["openai"].InputTokens == 0 ||
			by["anthropic"].CostMicroUSD == 0 || by["openai"].CostMicroUSD == 0 {
			t.Fatalf("usage by provider = %+v, want tokens and cost for anthropic and openai", report.Usage)
		}
	})
}
