package toolbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
	"github.com/parleyhq/parley/pkg/tool/toolbox"
)

// crm is a real HTTP endpoint that records what the HTTP tool sent.
func crm(t *testing.T) (*httptest.Server, chan string) {
	seen := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen <- fmt.Sprintf("%s %s %s auth=%s", r.Method, r.URL.RequestURI(), body, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status": "saved"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

// docsServer is a real MCP server over streamable HTTP with one tool.
func docsServer(t *testing.T, schemaHost string) *httptest.Server {
	type searchArgs struct {
		Query string `json:"query"`
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
		// A tool whose schema would make the schema library fetch a URL.
		s.AddTool(&mcp.Tool{Name: "sneaky", Description: "Remote schema",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"$ref":"` + schemaHost + `/s.json"}}}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search the docs"},
			func(ctx context.Context, req *mcp.CallToolRequest, args searchArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found: " + args.Query}}}, nil, nil
			})
		return s
	}, nil))
	t.Cleanup(srv.Close)
	return srv
}

func port(t *testing.T, raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

func TestBuildMixesEveryToolKindInOneDialog(t *testing.T) {
	crmSrv, seen := crm(t)
	fetched := 0
	schemaHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched++
		fmt.Fprint(w, `{"type":"string"}`)
	}))
	defer schemaHost.Close()
	docs := docsServer(t, schemaHost.URL)
	down := closedPort(t)

	cfg := fmt.Sprintf(`{
	  "basic_settings": {"name": "Mixed"},
	  "tools": [
	    {"name": "save_contact", "description": "Save a contact",
	     "parameters": {"type": "object", "properties": {"email": {"type": "string"}, "seats": {"type": "integer"}}, "required": ["email"]},
	     "endpoint": {"url": "%s/contacts/<email>", "method": "POST",
	                  "headers": {"Authorization": "Bearer {{secrets.crm_token}}"},
	                  "body": {"seats": "<seats>", "dialog": "{{dialog_id}}"}}},
	    {"name": "pick_slot", "description": "Let the user pick a slot in the widget", "execution": "client",
	     "parameters": {"type": "object", "properties": {"day": {"type": "string"}}}}
	  ],
	  "native_tools": ["current_time", "remember", "recall"],
	  "mcp_servers": [
	    {"name": "docs", "transport": "http", "url": "%s"},
	    {"name": "down", "transport": "http", "url": "http://127.0.0.1:%d/mcp"}
	  ]
	}`, crmSrv.URL, docs.URL, down)
	parsed, err := botconfig.Load([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	bot, err := botconfig.Compile(parsed)
	if err != nil {
		t.Fatal(err)
	}

	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port(t, crmSrv.URL), port(t, docs.URL), down})
	if err != nil {
		t.Fatal(err)
	}
	client := outbound.NewClient(policy, outbound.Options{})
	pool := mcptool.New(mcptool.Options{HTTPClient: client})
	t.Cleanup(func() { pool.Close() })

	box, err := toolbox.Build(context.Background(), bot, toolbox.Options{
		TenantID:   "ten_1",
		Vars:       botconfig.Vars{"dialog_id": "dlg_42", "secrets.crm_token": "s3cret"},
		HTTPClient: client,
		MCP:        pool,
		Natives:    builtin.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, d := range box.Set.Definitions() {
		names = append(names, d.Name)
	}
	want := "save_contact,pick_slot,current_time,remember,recall,docs__search,docs__sneaky"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}
	if len(box.Warnings) != 1 || !strings.Contains(box.Warnings[0], "down") {
		t.Errorf("warnings = %q, want one naming the unreachable server", box.Warnings)
	}
	if fetched != 0 {
		t.Errorf("an MCP tool's remote $ref made Parley fetch %d documents", fetched)
	}

	ctx := context.Background()
	t.Run("the HTTP tool renders arguments, variables and secrets", func(t *testing.T) {
		res := box.Set.Call(ctx, "save_contact", json.RawMessage(`{"email":"ann@example.com","seats":3}`))
		if res.IsError {
			t.Fatal(res.Content)
		}
		got := <-seen
		wantReq := `POST /contacts/ann@example.com {"seats":3,"dialog":"dlg_42"} auth=Bearer s3cret`
		if got != wantReq {
			t.Errorf("endpoint saw %q, want %q", got, wantReq)
		}
		if strings.Contains(res.Content, "s3cret") {
			t.Errorf("result leaks the secret: %s", res.Content)
		}
	})
	t.Run("the client tool pauses instead of running", func(t *testing.T) {
		tl, _ := box.Set.Lookup("pick_slot")
		ce, ok := tl.(tool.ClientExecuted)
		if !ok || !ce.ClientExecuted() {
			t.Fatal("pick_slot is not client-executed")
		}
	})
	t.Run("native tools share the dialog's memory", func(t *testing.T) {
		box.Set.Call(ctx, "remember", json.RawMessage(`{"key":"plan","value":"pro"}`))
		if res := box.Set.Call(ctx, "recall", json.RawMessage(`{"key":"plan"}`)); res.Content != "pro" {
			t.Errorf("recall = %q", res.Content)
		}
	})
	t.Run("the MCP tool reaches its server", func(t *testing.T) {
		res := box.Set.Call(ctx, "docs__search", json.RawMessage(`{"query":"returns"}`))
		if res.IsError || res.Content != "found: returns" {
			t.Errorf("docs__search = %+v", res)
		}
	})
}

func TestBuildWithoutAnMCPPoolLeavesServersOutWithAWarning(t *testing.T) {
	parsed, err := botconfig.Load([]byte(`{"basic_settings": {"name": "X"}, "native_tools": ["end_dialog"],
	  "mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com/mcp"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bot, err := botconfig.Compile(parsed)
	if err != nil {
		t.Fatal(err)
	}
	box, err := toolbox.Build(context.Background(), bot, toolbox.Options{Natives: builtin.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if box.Set.Len() != 1 || len(box.Warnings) != 1 {
		t.Errorf("tools = %d, warnings = %q", box.Set.Len(), box.Warnings)
	}
}

func TestEphemeralReachesNativeAndMCPTools(t *testing.T) {
	docs := docsServer(t, "http://127.0.0.1:1")
	cfg := fmt.Sprintf(`{
	  "basic_settings": {"name": "Ephemeral"},
	  "native_tools": ["remember", {"name": "current_time", "ephemeral": 1}],
	  "mcp_servers": [{"name": "docs", "transport": "http", "url": "%s", "ephemeral": 2, "tools": {"allow": ["search"]}}]
	}`, docs.URL)
	bot, err := botconfig.Options{}.LoadAndCompile([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port(t, docs.URL)})
	if err != nil {
		t.Fatal(err)
	}
	client := outbound.NewClient(policy, outbound.Options{})
	pool := mcptool.New(mcptool.Options{HTTPClient: client})
	t.Cleanup(func() { pool.Close() })
	box, err := toolbox.Build(context.Background(), bot, toolbox.Options{TenantID: "ten_1", HTTPClient: client, MCP: pool, Natives: builtin.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"remember": 0, "current_time": 1, "docs__search": 2}
	for name, keep := range want {
		tl, ok := box.Set.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		got := 0
		if e, ok := tl.(tool.Ephemeral); ok {
			got = e.KeepLast()
		}
		if got != keep {
			t.Errorf("%s keeps the last %d outputs, want %d", name, got, keep)
		}
	}
}

// The wiring passes the native tools' registry; a missing one is an error,
// not a registry built behind the caller's back.
func TestBuildRefusesWithoutANativeRegistry(t *testing.T) {
	parsed, err := botconfig.Load([]byte(`{"basic_settings": {"name": "X"}}`))
	if err != nil {
		t.Fatal(err)
	}
	bot, err := botconfig.Compile(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolbox.Build(context.Background(), bot, toolbox.Options{}); err == nil || !strings.Contains(err.Error(), "Natives") {
		t.Fatalf("Build = %v; want an error naming Options.Natives", err)
	}
}
