package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// The official clients of the two protocols the API speaks besides its
// own, installed by .ci/install-clients.sh (which CI runs and insists on).
const clientsDir = "../../.ci/clients/node_modules"

// runClient runs testdata/clients/<script> with node against the server,
// env as extra variables, and decodes the one JSON object it prints. It
// skips, saying why, where node or the clients are missing.
func runClient(t *testing.T, script string, out any, env ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; CI runs this test (.ci/run)")
	}
	modules, err := filepath.Abs(clientsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"openai", "@modelcontextprotocol/sdk"} {
		if _, err := os.Stat(filepath.Join(modules, pkg)); err != nil {
			t.Skipf("%s is not installed under .ci/clients; run bash .ci/install-clients.sh (CI does)", pkg)
		}
	}
	// The script runs from a directory whose node_modules are the pinned
	// clients, so its imports resolve to them.
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "clients", script))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, script), src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script))
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s%s", script, err, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), out); err != nil {
		t.Fatalf("node %s printed %q: %v\n%s", script, stdout.String(), err, stderr.String())
	}
}

func TestTheOfficialOpenAIClient(t *testing.T) {
	t.Parallel()
	e := newChatEnv(t, storetest.OpenSQLite(t), dialog.Limits{})
	e.llm.Enqueue(
		llmtest.ServerReply{Text: "Hello, Ada."},
		llmtest.ServerReply{Text: "You are Ada."},
		llmtest.ServerReply{Text: "Streaming works."},
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		llmtest.ServerReply{Text: "Cold in Oslo."},
	)
	// Another tenant with a bot of its own.
	other := e.mustCreateTenant(t, "other")
	if _, _, err := e.svc.Bots().Create(t.Context(), platform.Operator(), "other", "theirs", []byte(chatBot(e.shop.URL))); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(t.Context(), platform.Operator(), "other", "theirs", 1); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Models []string
		Model  string
		First  struct {
			Content, Finish, Object string
			Usage                   map[string]int
		}
		Dialog string
		Again  string
		Stream struct {
			Content, Finish string
			Usage           map[string]int
			Chunks          int
		}
		ToolCall struct {
			Finish, Name, Arguments string
		}
		ToolAnswer string
		Error      struct {
			Class, Type, Code, Param, Message string
			Status                            int
		}
		Theirs struct {
			Models []string
			Error  struct {
				Class, Code string
			}
		}
	}
	runClient(t, "openai.mjs", &out, "PARLEY_URL="+e.srv.URL, "PARLEY_KEY="+e.key, "PARLEY_OTHER_KEY="+other)
	t.Run("models lists and retrieves the tenant's bot", func(t *testing.T) {
		if strings.Join(out.Models, ",") != "helper" || out.Model != "helper" {
			t.Fatalf("models %v, retrieved %q", out.Models, out.Model)
		}
	})
	t.Run("a completion carries the reply, finish reason and usage", func(t *testing.T) {
		f := out.First
		if f.Object != "chat.completion" || f.Content != "Hello, Ada." || f.Finish != "stop" || f.Usage["total_tokens"] == 0 {
			t.Fatalf("first %+v", f)
		}
	})
	t.Run("the dialog header continues the stored dialog", func(t *testing.T) {
		if !strings.HasPrefix(out.Dialog, "dlg_") || out.Again != "You are Ada." {
			t.Fatalf("dialog %q, again %q", out.Dialog, out.Again)
		}
		sent := e.llm.Requests()[1].Request
		if got := sentRoles(sent); got != "user:Hi, I am Ada. | assistant:Hello, Ada. | user:Who am I?" {
			t.Fatalf("sent %s", got)
		}
	})
	t.Run("a stream arrives in chunks with a finish reason and usage", func(t *testing.T) {
		s := out.Stream
		if s.Content != "Streaming works." || s.Finish != "stop" || s.Usage["total_tokens"] == 0 || s.Chunks < 3 {
			t.Fatalf("stream %+v", s)
		}
	})
	t.Run("the client's tool is called back and its result answered", func(t *testing.T) {
		if out.ToolCall.Finish != "tool_calls" || out.ToolCall.Name != "get_weather" || out.ToolCall.Arguments != `{"city":"Oslo"}` {
			t.Fatalf("tool call %+v", out.ToolCall)
		}
		if out.ToolAnswer != "Cold in Oslo." {
			t.Fatalf("answer %q", out.ToolAnswer)
		}
		if got := sentRoles(e.llm.LastRequest()); got != "user:Weather in Oslo? | assistant:[get_weather] | tool:-3 and snowing" {
			t.Fatalf("sent %s", got)
		}
	})
	t.Run("a key sees only its tenant's bots: another tenant's is the SDK's NotFoundError", func(t *testing.T) {
		if strings.Join(out.Theirs.Models, ",") != "theirs" || out.Theirs.Error.Class != "NotFoundError" || out.Theirs.Error.Code != "model_not_found" {
			t.Fatalf("theirs %+v", out.Theirs)
		}
	})
	t.Run("an unknown model is the SDK's NotFoundError", func(t *testing.T) {
		er := out.Error
		if er.Class != "NotFoundError" || er.Status != 404 || er.Type != "invalid_request_error" || er.Code != "model_not_found" || er.Param != "model" {
			t.Fatalf("error %+v", er)
		}
	})
}

func TestTheOfficialMCPClient(t *testing.T) {
	t.Parallel()
	e := newChatEnv(t, storetest.OpenSQLite(t), dialog.Limits{})
	op := platform.Operator()
	cfg := strings.Replace(chatBot(e.shop.URL), `"name": "Shop"}`, `"name": "Shop", "description": "Answers questions about the shop's orders"}`, 1)
	if _, _, err := e.svc.Versions().Create(t.Context(), op, "shop", "helper", []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(t.Context(), op, "shop", "helper", 2); err != nil {
		t.Fatal(err)
	}
	other := e.mustCreateTenant(t, "other")
	e.llm.Enqueue(llmtest.ServerReply{Text: "Hello, Ada."}, llmtest.ServerReply{Text: "You are Ada."})
	var out struct {
		Server       struct{ Name, Title, Version string }
		Instructions string
		Tools        []struct {
			Name     string
			Required []string
		}
		First, Second struct {
			Text, Dialog string
			IsError      bool
		}
		OtherTenant, NoKey string
	}
	runClient(t, "mcp.mjs", &out, "PARLEY_MCP_URL="+e.srv.URL+"/v1/tenants/shop/bots/helper/mcp", "PARLEY_KEY="+e.key, "PARLEY_OTHER_KEY="+other)
	t.Run("the server is the bot, its description the instructions", func(t *testing.T) {
		if out.Server.Name != "helper" || out.Server.Title != "Shop" || out.Server.Version != "2" ||
			out.Instructions != "Answers questions about the shop's orders" {
			t.Fatalf("server %+v, instructions %q", out.Server, out.Instructions)
		}
	})
	t.Run("one tool asks the bot", func(t *testing.T) {
		if len(out.Tools) != 1 || out.Tools[0].Name != "ask" || strings.Join(out.Tools[0].Required, ",") != "message" {
			t.Fatalf("tools %+v", out.Tools)
		}
	})
	t.Run("calls in one session continue one dialog", func(t *testing.T) {
		if out.First.Text != "Hello, Ada." || out.Second.Text != "You are Ada." || out.First.IsError || out.Second.IsError {
			t.Fatalf("first %+v, second %+v", out.First, out.Second)
		}
		if out.First.Dialog == "" || out.First.Dialog != out.Second.Dialog {
			t.Fatalf("dialogs %q and %q", out.First.Dialog, out.Second.Dialog)
		}
		if got := sentRoles(e.llm.LastRequest()); got != "user:I am Ada. | assistant:Hello, Ada. | user:Who am I?" {
			t.Fatalf("sent %s", got)
		}
		d, err := e.rt.Dialogs().Get(t.Context(), op, "shop", out.First.Dialog, "")
		if err != nil || d.Channel != "mcp" {
			t.Fatalf("dialog %+v: %v", d, err)
		}
	})
	t.Run("another tenant's key and no key are refused", func(t *testing.T) {
		if !strings.HasPrefix(out.OtherTenant, "refused 404:") || !strings.HasPrefix(out.NoKey, "refused 401:") {
			t.Fatalf("other tenant: %s; no key: %s", out.OtherTenant, out.NoKey)
		}
	})
}

// OpenAI's SDKs retry a 429 by themselves, sleeping as long as Retry-After
// says: past the daily quota, until midnight. The face tells them not to.
func TestTheOfficialOpenAIClientStopsAtTheQuota(t *testing.T) {
	t.Parallel()
	e := newChatEnv(t, storetest.OpenSQLite(t), dialog.Limits{DailyTokens: 1})
	e.llm.Enqueue(llmtest.ServerReply{Text: "Hello."})
	type refused struct {
		Error struct {
			Class, Type, Code string
			Status            int
		}
		Requests int
	}
	var out struct {
		First          string
		JSON, Streamed refused
	}
	runClient(t, "openai_quota.mjs", &out, "PARLEY_URL="+e.srv.URL, "PARLEY_KEY="+e.key)
	if out.First != "Hello." {
		t.Fatalf("first %q", out.First)
	}
	for name, r := range map[string]refused{"JSON": out.JSON, "streamed": out.Streamed} {
		t.Run("a "+name+" completion is the SDK's RateLimitError with insufficient_quota, sent once", func(t *testing.T) {
			if r.Error.Class != "RateLimitError" || r.Error.Status != 429 || r.Error.Type != "insufficient_quota" ||
				r.Error.Code != "insufficient_quota" || r.Requests != 1 {
				t.Fatalf("%+v", r)
			}
		})
	}
}
