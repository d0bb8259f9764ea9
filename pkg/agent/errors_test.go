package agent_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func TestErrorEventsNeverCarryTheProvidersOwnText(t *testing.T) {
	tests := []struct {
		name     string
		err      *llm.Error
		wantCode string
	}{
		{"an upstream message echoing the key", &llm.Error{Kind: llm.ErrAuth, StatusCode: 401,
			Message: "Incorrect API key provided: sk-live-LEAKME1234"}, "llm_auth"},
		{"a network error naming an internal address", &llm.Error{Kind: llm.ErrNetwork,
			Message: `Post "http://10.1.2.3:8000/v1/chat/completions": dial tcp 10.1.2.3:8000: connect: connection refused`}, "llm_network"},
		{"a kind this build does not know", &llm.Error{Kind: "exotic", Message: "upstream said LEAKME"}, "llm_exotic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, agent.Config{}, llmtest.Fail(tc.err))
			h.send("hello")
			errs := find[agent.Error](h.events)
			if len(errs) != 1 {
				t.Fatalf("got %d error events, want 1", len(errs))
			}
			got := errs[0]
			if got.Code != tc.wantCode {
				t.Errorf("code = %q, want %q", got.Code, tc.wantCode)
			}
			if got.Message == "" || strings.Contains(got.Message, "LEAKME") || strings.Contains(got.Message, "10.1.2.3") {
				t.Errorf("message %q leaks the provider's text", got.Message)
			}
		})
	}
}
