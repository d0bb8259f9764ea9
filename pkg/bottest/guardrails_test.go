package bottest_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/bottest"
)

// A conversation test sees a bot refuse a blocked topic as the server
// does: with its guardrails reply, stop reason guardrail, and no model
// call (no scripted answer is needed).
func TestAConversationTestSeesABlockedTopicRefused(t *testing.T) {
	t.Parallel()
	cfg, err := botconfig.Load([]byte(`{"basic_settings": {"name": "Shop"},
  "guardrails": {"blocked_topics": ["crypto"], "reply": "I only help with orders."}}`))
	if err != nil {
		t.Fatal(err)
	}
	bot, err := botconfig.Options{}.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	suite, err := bottest.Parse([]byte(`{"tests": [
  {"name": "crypto is refused", "turns": [{"user": "Any Crypto tips?",
    "expect": {"reply_contains": ["only help with orders"], "stop_reason": "guardrail"}}]},
  {"name": "orders are answered", "turns": [{"user": "Where is my order?", "model": [{"text": "On its way."}],
    "expect": {"reply_contains": ["On its way"], "stop_reason": "completed"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range bottest.Run(context.Background(), bot, suite, bottest.Options{}) {
		if !r.Passed {
			t.Errorf("%s: %v", r.Name, r.Failures)
		}
	}
}
