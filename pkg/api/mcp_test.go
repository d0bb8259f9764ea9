package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// bearer adds a key to every request of an MCP client.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// mcpSession connects the Go SDK's client to a bot's MCP face.
func (e *chatEnv) mcpSession(t *testing.T, key, bot string) *mcp.ClientSession {
	t.Helper()
	return e.mcpSessionWith(t, key, bot, nil)
}

func (e *chatEnv) mcpSessionWith(t *testing.T, key, bot string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/v1/tenants/shop/bots/" + bot + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}}, MaxRetries: -1}
	s, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ask(t *testing.T, s *mcp.ClientSession, message string) (string, bool) {
	t.Helper()
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": message}})
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	var text strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), r.IsError
}

func TestAnMCPSessionStaysWithTheKeyAndBotThatOpenedIt(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		op := platform.Operator()
		if _, _, err := e.svc.Bots().Create(t.Context(), op, "shop", "second", []byte(chatBot(e.shop.URL))); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(t.Context(), op, "shop", "second", 1); err != nil {
			t.Fatal(err)
		}
		sibling, err := e.svc.APIKeys().Create(t.Context(), op, "shop", platform.APIKeyInput{Name: "sibling", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		s := e.mcpSession(t, e.key, "helper")
		list := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
		cases := []struct {
			name, key, bot string
			want           int
		}{
			{"its own key and bot", e.key, "helper", http.StatusOK},
			{"another key of the tenant", sibling.Key, "helper", http.StatusForbidden},
			{"another bot's URL", e.key, "second", http.StatusForbidden},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(t, "POST", "/v1/tenants/shop/bots/"+tc.bot+"/mcp", tc.key, list,
					"Accept", "application/json, text/event-stream", "Mcp-Session-Id", s.ID(), "Mcp-Protocol-Version", s.InitializeResult().ProtocolVersion)
				if r.StatusCode != tc.want {
					t.Fatalf("%d %s", r.StatusCode, r.body)
				}
			})
		}
	})
}

func TestAskFailuresAreToolErrorsTheCallerCanRead(t *testing.T) {
	t.Parallel()
	t.Run("a rate limit", func(t *testing.T) {
		forEachChat(t, dialog.Limits{KeyRate: 0.001, KeyBurst: 1}, func(t *testing.T, e *chatEnv) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
			s := e.mcpSession(t, e.key, "helper")
			if text, isErr := ask(t, s, "hi"); isErr || text != "one" {
				t.Fatalf("first ask %q %v", text, isErr)
			}
			text, isErr := ask(t, s, "again")
			if !isErr || !strings.Contains(text, "too fast") {
				t.Fatalf("second ask %q %v", text, isErr)
			}
		})
	})
	t.Run("the daily token quota", func(t *testing.T) {
		forEachChat(t, dialog.Limits{DailyTokens: 1}, func(t *testing.T, e *chatEnv) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
			s := e.mcpSession(t, e.key, "helper")
			if text, isErr := ask(t, s, "hi"); isErr || text != "one" {
				t.Fatalf("first ask %q %v", text, isErr)
			}
			text, isErr := ask(t, s, "again")
			if !isErr || !strings.Contains(text, "daily token quota") {
				t.Fatalf("second ask %q %v", text, isErr)
			}
		})
	})
	t.Run("a failing model", func(t *testing.T) {
		forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
			e.llm.Enqueue(llmtest.QuotaExhausted())
			text, isErr := ask(t, e.mcpSession(t, e.key, "helper"), "hi")
			if !isErr || text == "" || strings.Contains(text, "sk-test") {
				t.Fatalf("ask %q %v", text, isErr)
			}
		})
	})
	t.Run("a blank message", func(t *testing.T) {
		forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
			text, isErr := ask(t, e.mcpSession(t, e.key, "helper"), "  ")
			if !isErr || !strings.Contains(text, "message is required") {
				t.Fatalf("ask %q %v", text, isErr)
			}
		})
	})
	t.Run("a bot pausing for its client tool", func(t *testing.T) {
		forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "locate", Arguments: `{}`}}})
			text, isErr := ask(t, e.mcpSession(t, e.key, "helper"), "where am I?")
			if !isErr || !strings.Contains(text, "dialog dlg_") {
				t.Fatalf("ask %q %v", text, isErr)
			}
		})
	})
}

func TestTheMCPFaceServesOnlyPublishedBots(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		if _, _, err := e.svc.Bots().Create(t.Context(), platform.Operator(), "shop", "draft", []byte(chatBot(e.shop.URL))); err != nil {
			t.Fatal(err)
		}
		r := e.raw(t, "POST", "/v1/tenants/shop/bots/draft/mcp", e.key, `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			"Accept", "application/json, text/event-stream")
		if r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "no published version") {
			t.Fatalf("%d %s", r.StatusCode, r.body)
		}
	})
}

func TestTheMCPFaceOffersNoStreamOfItsOwn(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		r := e.raw(t, "GET", "/v1/tenants/shop/bots/helper/mcp", e.key, "", "Accept", "text/event-stream")
		if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST, DELETE" {
			t.Fatalf("%d %v %s", r.StatusCode, r.Header, r.body)
		}
	})
}

func TestAnAskReportsItsStepsToAClientThatAsksForProgress(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		steps := make(chan string, 16)
		s := e.mcpSessionWith(t, e.key, "helper", &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				steps <- r.Params.Message
			}})
		twoToolTurn(e)
		params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": "A7? tents?"}}
		params.SetProgressToken("p1")
		r, err := s.CallTool(t.Context(), params)
		if err != nil || r.IsError {
			t.Fatalf("ask: %v %+v", err, r)
		}
		// Notifications travel on the call's own stream, before its
		// result, but the SDK hands them to the handler on a goroutine of
		// its own: the last may reach it after CallTool returned.
		want := []string{"thinking", "calling lookup_order", "calling check_stock", "thinking"}
		var got []string
		for range want {
			select {
			case m := <-steps:
				got = append(got, m)
			case <-time.After(progressWait):
				t.Fatalf("progress %q after %s; want %q", got, progressWait, want)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("progress %q; want %q", got, want)
		}
	})
}

// progressWait bounds the wait for a progress notification already sent;
// it is not a speed assertion.
const progressWait = 15 * time.Second
