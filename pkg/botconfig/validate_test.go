package botconfig

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// mistakeCase is one mistake an author can make: the config, the pointer the
// problem must name and words the message must contain (what to do).
type mistakeCase struct {
	name    string
	data    string
	pointer string
	message string
}

const (
	objParams  = `{"type": "object", "properties": {"id": {"type": "string"}, "note": {"type": "string"}}, "required": ["id"]}`
	okEndpoint = `{"url": "https://api.example.com/items/<id>"}`
)

func withEndpoint(endpoint string, extra ...string) string {
	return toolDoc(objParams, endpoint, extra...)
}

var structureMistakes = []mistakeCase{
	{"a config without a name says name is required", `{"basic_settings": {}}`, "/basic_settings/name", `"name" is required`},
	{"a config without basic_settings says it is required", `{"tools": []}`, "/basic_settings", `"basic_settings" is required`},
	{"a blank name asks for a name", `{"basic_settings": {"name": "  "}}`, "/basic_settings/name", "needs a name"},
	{"a misspelt top-level field is unknown", doc(`"tool": []`), "/tool", `unknown field "tool"; check its spelling`},
	{"a misspelt nested field is unknown", doc(`"runtime": {"max_turn": 3}`), "/runtime/max_turn", "unknown field"},
	{"a number given as a string names the expected type", doc(`"runtime": {"max_turns": "8"}`), "/runtime/max_turns", "must be an integer, not a string"},
	{"max_turns out of range names the limit", doc(`"runtime": {"max_turns": 1000}`), "/runtime/max_turns", "less than or equal to 100"},
	{"a temperature above 2 is rejected", doc(`"llm": {"temperature": 3}`), "/llm/temperature", "less than or equal to 2"},
	{"a bad chatbot_id explains the allowed characters", `{"basic_settings": {"name": "x", "chatbot_id": "a b"}}`, "/basic_settings/chatbot_id", "letters, digits"},
	{"an empty action-book condition is rejected", doc(`"action_books": [{"condition": "", "action": "x"}]`), "/action_books/0/condition", "must not be empty"},
	{"a compaction threshold above 1 is rejected", doc(`"runtime": {"compaction": {"threshold_ratio": 1.5}}`), "/runtime/compaction/threshold_ratio", "less than or equal to 1"},
	{"a compaction threshold of 0 is rejected", doc(`"runtime": {"compaction": {"threshold_ratio": 0}}`), "/runtime/compaction/threshold_ratio", "greater than 0"},
	{"keep_recent out of range is rejected", doc(`"runtime": {"compaction": {"keep_recent": 0}}`), "/runtime/compaction/keep_recent", "greater than or equal to 1"},
	{"a misspelt compaction field is unknown", doc(`"runtime": {"compaction": {"threshold": 0.5}}`), "/runtime/compaction/threshold", "unknown field"},
	{"an unknown execution mode lists the allowed ones", doc(`"tools": [{"name": "t", "description": "d", "execution": "browser"}]`), "/tools/0/execution", "must be one of"},
}

var toolMistakes = []mistakeCase{
	{"a tool name with a space explains the allowed characters", doc(`"tools": [{"name": "save it", "description": "d", "execution": "client"}]`), "/tools/0/name", "letters, digits"},
	{"two tools with one name are rejected at the second", doc(`"tools": [{"name": "t", "description": "d", "execution": "client"}, {"name": "t", "description": "d", "execution": "client"}]`), "/tools/1/name", `already used at /tools/0/name`},
	{"a tool named like a native tool clashes", doc(`"tools": [{"name": "current_time", "description": "d", "execution": "client"}]`, `"native_tools": ["current_time"]`), "/native_tools/0", "must be unique"},
	{"a tool named like an MCP tool clashes", doc(`"tools": [{"name": "docs__search", "description": "d", "execution": "client"}]`, `"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com"}]`), "/tools/0/name", `looks like a tool of MCP server "docs"`},
	{"an unknown native tool lists the known ones", doc(`"native_tools": ["weather"]`), "/native_tools/0", "use one of current_time, handoff_to_human"},
	{"an action book naming an undeclared tool says where to declare it", doc(`"action_books": [{"condition": "c", "action": "a", "tools": ["x"]}]`), "/action_books/0/tools/0", `unknown tool "x" in action book; declare it in tools, native_tools, agents or mcp_servers`},
	{"an action book naming a native tool that is not enabled is rejected", doc(`"action_books": [{"condition": "c", "action": "a", "tools": ["current_time"]}]`), "/action_books/0/tools/0", "declare it in tools, native_tools"},
	{"an action book naming a denied MCP tool is rejected", doc(`"action_books": [{"condition": "c", "action": "a", "tools": ["docs__delete"]}]`, `"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "tools": {"deny": ["delete"]}}]`), "/action_books/0/tools/0", "unknown tool"},
	{"a server tool without an endpoint asks for one", doc(`"tools": [{"name": "t", "description": "d"}]`), "/tools/0/endpoint", `needs an endpoint; add one, or set execution to "client"`},
	{"a client tool with an endpoint is rejected", doc(`"tools": [{"name": "t", "description": "d", "execution": "client", "endpoint": {"url": "https://api.example.com"}}]`), "/tools/0/endpoint", "has no endpoint"},
	{"parameters that are not an object schema are rejected", toolDoc(`{"type": "string"}`, `{"url": "https://api.example.com/items"}`), "/tools/0/parameters/type", `"type": "object"`},
	{"a required parameter missing from properties is named", toolDoc(`{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id", "name"]}`, okEndpoint), "/tools/0/parameters/required/1", `"name" is required but not in properties`},
	{"a remote $ref in parameters is refused", toolDoc(`{"type": "object", "properties": {"id": {"$ref": "https://evil.example.com/s.json"}}, "required": ["id"]}`, okEndpoint), "/tools/0/parameters/properties/id/$ref", "remote schemas are not fetched"},
}

var endpointMistakes = []mistakeCase{
	{"an ftp URL is rejected", withEndpoint(`{"url": "ftp://files.example.com/<id>"}`), "/tools/0/endpoint/url", `scheme "ftp" is not allowed; use https`},
	{"a relative URL asks for an absolute one", withEndpoint(`{"url": "/items/<id>"}`), "/tools/0/endpoint/url", "must be absolute"},
	{"a placeholder in the host is rejected", withEndpoint(`{"url": "https://<id>.example.com/"}`), "/tools/0/endpoint/url", "not allowed in the URL's scheme, host or port"},
	{"a placeholder in the port is rejected", withEndpoint(`{"url": "https://api.example.com:{{port}}/"}`), "/tools/0/endpoint/url", "scheme, host or port"},
	{"credentials in the URL are rejected", withEndpoint(`{"url": "https://user:pw@api.example.com/<id>"}`), "/tools/0/endpoint/url", "send them in a header"},
	{"a URL fragment is rejected", withEndpoint(`{"url": "https://api.example.com/<id>#top"}`), "/tools/0/endpoint/url", "fragment"},
	{"a lower-case method lists the supported ones", withEndpoint(`{"url": "https://api.example.com/<id>", "method": "get"}`), "/tools/0/endpoint/method", "must be one of"},
	{"a GET with a body suggests POST", withEndpoint(`{"url": "https://api.example.com/<id>", "method": "GET", "body": {"a": 1}}`), "/tools/0/endpoint/body", "use method POST"},
	{"a zero timeout is rejected", withEndpoint(`{"url": "https://api.example.com/<id>", "timeout": 0}`), "/tools/0/endpoint/timeout", "greater than 0"},
	{"a timeout over two minutes is rejected", withEndpoint(`{"url": "https://api.example.com/<id>", "timeout": 600}`), "/tools/0/endpoint/timeout", "less than or equal to 120"},
	{"an undeclared argument asks to declare it", withEndpoint(`{"url": "https://api.example.com/<id>", "body": {"x": "<colour>"}}`), "/tools/0/endpoint/body/x", `add "colour" to parameters.properties`},
	{"an optional argument in the path asks to require it", withEndpoint(`{"url": "https://api.example.com/<id>/<note>"}`), "/tools/0/endpoint/url", `add "note" to parameters.required or move it to query_params`},
	{"an unknown variable lists where variables come from", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"X-Tier": "{{tier}}"}}`), "/tools/0/endpoint/headers/X-Tier", "declare it in context_variables"},
	{"a stray < suggests the escape", withEndpoint(`{"url": "https://api.example.com/<id>", "body": {"note": "a < b"}}`), "/tools/0/endpoint/body/note", `write "<<" for a literal "<"`},
	{"an unclosed {{ suggests the escape", withEndpoint(`{"url": "https://api.example.com/<id>", "body": {"note": "{{channel"}}`), "/tools/0/endpoint/body/note", `write "{{{{" for a literal "{{"`},
	{"a bad secret name is a template error", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"X-Key": "{{secrets.a-b}}"}}`), "/tools/0/endpoint/headers/X-Key", "{{secrets.NAME}}"},
	{"the sentinel under an unknown key is rejected", withEndpoint(`{"url": "https://api.example.com/<id>", "body": {"sessionRef": "todo_autofill_by_system"}}`), "/tools/0/endpoint/body/sessionRef", "names no variable"},
	{"the sentinel in an array needs a key", withEndpoint(`{"url": "https://api.example.com/<id>", "body": {"ids": ["todo_autofill_by_system"]}}`), "/tools/0/endpoint/body/ids/0", "needs an object key"},
	{"the sentinel in a header points to {{variable}}", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"dialogId": "todo_autofill_by_system"}}`), "/tools/0/endpoint/headers/dialogId", "use {{variable}} in headers"},
	{"the sentinel in query_params under an unknown key is rejected", withEndpoint(`{"url": "https://api.example.com/<id>", "query_params": {"ref": "todo_autofill_by_system"}}`), "/tools/0/endpoint/query_params/ref", "names no variable"},
	{"a Host header is refused", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"Host": "internal"}}`), "/tools/0/endpoint/headers/Host", "set by the platform"},
	{"a header value with a line break is refused", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"X-A": "a\r\nX-B: b"}}`), "/tools/0/endpoint/headers/X-A", "line breaks"},
	{"two headers differing only in case are refused", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"x-a": "1", "X-A": "2"}}`), "/tools/0/endpoint/headers/x-a", "keep one"},
	{"an invalid header name is refused", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"X A": "1"}}`), "/tools/0/endpoint/headers/X A", "not a valid header name"},
	{"a placeholder in a query name is refused", withEndpoint(`{"url": "https://api.example.com/<id>?<note>=1"}`), "/tools/0/endpoint/url", "only values can"},
	{"a seed-style {name} that is not declared asks to declare or escape it", withEndpoint(`{"url": "https://api.example.com/<id>", "body": {"email": "{emial}"}}`), "/tools/0/endpoint/body/email", `add "emial" to parameters.properties, or write \{emial}`},
	{"a seed-style {name} in a header that is not declared is refused", withEndpoint(`{"url": "https://api.example.com/<id>", "headers": {"X-Ref": "ref-{ref}"}}`), "/tools/0/endpoint/headers/X-Ref", `{ref} is not a declared argument`},
	{"a seed-style {name} in query_params that is not declared is refused", withEndpoint(`{"url": "https://api.example.com/<id>", "query_params": {"q": "{query}"}}`), "/tools/0/endpoint/query_params/q", `{query} is not a declared argument`},
	{"a seed-style optional {name} in the path asks to require it", withEndpoint(`{"url": "https://api.example.com/<id>/{note}"}`), "/tools/0/endpoint/url", `{note} is optional but used in the URL path`},
	{"a seed-style placeholder in the host is rejected", withEndpoint(`{"url": "https://{id}.example.com/"}`), "/tools/0/endpoint/url", "not allowed in the URL's scheme, host or port"},
}

var mcpAndVariableMistakes = []mistakeCase{
	{"an http MCP server without a url asks for one", doc(`"mcp_servers": [{"name": "docs", "transport": "http"}]`), "/mcp_servers/0/url", "url is required for this transport"},
	{"an MCP server url with a bad scheme is rejected", doc(`"mcp_servers": [{"name": "docs", "transport": "sse", "url": "ws://mcp.example.com"}]`), "/mcp_servers/0/url", "use https"},
	{"an http MCP server with a command is rejected", doc(`"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "command": "docs-server"}]`), "/mcp_servers/0/command", `set transport to "stdio"`},
	{"a stdio MCP server without a command asks for one", doc(`"mcp_servers": [{"name": "fs", "transport": "stdio"}]`), "/mcp_servers/0/command", "needs a command"},
	{"a stdio MCP server with a url is rejected", doc(`"mcp_servers": [{"name": "fs", "transport": "stdio", "command": "fs", "url": "https://x.example.com"}]`), "/mcp_servers/0/url", "http and sse transports"},
	{"an unknown transport lists the allowed ones", doc(`"mcp_servers": [{"name": "fs", "transport": "websocket"}]`), "/mcp_servers/0/transport", "must be one of"},
	{"an MCP server name too long for tool names is rejected", doc(`"mcp_servers": [{"name": "` + strings.Repeat("s", 33) + `", "transport": "http", "url": "https://mcp.example.com"}]`), "/mcp_servers/0/name", "does not match"},
	{"an MCP server name containing __ is rejected", doc(`"mcp_servers": [{"name": "my__docs", "transport": "http", "url": "https://mcp.example.com"}]`), "/mcp_servers/0/name", "separates server and tool names"},
	{"an MCP tool whose exposed name exceeds 64 characters is rejected", doc(`"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "tools": {"allow": ["` + strings.Repeat("t", 60) + `"]}}]`), "/mcp_servers/0/tools/allow/0", "shorten the server name"},
	{"an MCP server named like a tool clashes", doc(`"tools": [{"name": "docs", "description": "d", "execution": "client"}]`, `"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com"}]`), "/tools/0/name", "already used at /mcp_servers/0/name"},
	{"a model argument in an MCP header is rejected", doc(`"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "headers": {"X-Q": "<q>"}}]`), "/mcp_servers/0/headers/X-Q", "model arguments cannot be used here"},
	{"a placeholder in an MCP url is rejected", doc(`"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://{{tenant_id}}.example.com"}]`), "/mcp_servers/0/url", "pass values in headers"},
	{"a context variable named like a system variable is rejected", doc(`"context_variables": [{"name": "user_id"}]`), "/context_variables/0/name", "system variable the platform fills"},
	{"a context variable named secrets is rejected", doc(`"context_variables": [{"name": "secrets"}]`), "/context_variables/0/name", "reserved"},
	{"a context variable with a dash is rejected", doc(`"context_variables": [{"name": "customer-tier"}]`), "/context_variables/0/name", "does not match"},
	{"a context variable declared twice is rejected at the second", doc(`"context_variables": [{"name": "tier"}, {"name": "tier"}]`), "/context_variables/1/name", "declared twice"},
	{"an unknown context variable source lists the three", doc(`"context_variables": [{"name": "tier", "source": "cookie"}]`), "/context_variables/0/source", "must be one of"},
	{"a claim on a page variable is rejected", doc(`"context_variables": [{"name": "tier", "source": "page", "claim": "plan"}]`), "/context_variables/0/claim", "source identity"},
	{"a claim on a server variable is rejected", doc(`"context_variables": [{"name": "tier", "claim": "plan"}]`), "/context_variables/0/claim", "source identity"},
	{"a required variable with a default is flagged", doc(`"context_variables": [{"name": "tier", "required": true, "default": "gold"}]`), "/context_variables/0/default", "never uses its default"},
}

const skillOK = `"name": "refunds", "description": "d", "instructions": "i"`

var agentAndSkillMistakes = []mistakeCase{
	{"an agent bot that is not a slug is rejected", doc(`"agents": [{"bot": "Research Bot"}]`), "/agents/0/bot", "does not match"},
	{"an agent listed twice is rejected at the second", doc(`"agents": [{"bot": "research"}, {"bot": "research", "name": "ask_again"}]`), "/agents/1/bot", `already an agent at /agents/0`},
	{"an agent whose tool name clashes with a tool is rejected", doc(`"tools": [{"name": "research", "description": "d", "execution": "client"}]`, `"agents": [{"bot": "research"}]`), "/agents/0/name", "already used at /tools/0/name"},
	{"a max_agent_depth beyond 5 is rejected", doc(`"runtime": {"max_agent_depth": 9}`), "/runtime/max_agent_depth", "less than or equal to 5"},
	{"two skills with one name are rejected at the second", doc(`"skills": [{` + skillOK + `}, {` + skillOK + `}]`), "/skills/1/name", `skill "refunds" is already defined at /skills/0`},
	{"a skill naming a tool that is not defined says where to declare it", doc(`"skills": [{` + skillOK + `, "tools": ["refund_order"]}]`), "/skills/0/tools/0", `unknown tool "refund_order" in skill; declare it in tools, native_tools, agents or mcp_servers`},
	{"a skill without instructions is rejected", doc(`"skills": [{"name": "refunds", "description": "d", "instructions": ""}]`), "/skills/0/instructions", "must not be empty"},
	{"tool_choice naming a skill's tool is refused", doc(`"tools": [{"name": "refund_order", "description": "d", "execution": "client"}]`, `"skills": [{`+skillOK+`, "tools": ["refund_order"]}]`, `"llm": {"tool_choice": "refund_order"}`), "/llm/tool_choice", `names a tool of skill "refunds"`},
	{"a tool named load_skill clashes with the skills' tool", doc(`"tools": [{"name": "load_skill", "description": "d", "execution": "client"}]`, `"skills": [{`+skillOK+`}]`), "/skills", `name "load_skill" is already used at /tools/0/name`},
}

func TestEachAuthorMistakeNamesItsPointerAndWhatToDo(t *testing.T) {
	groups := map[string][]mistakeCase{
		"agents and skills": agentAndSkillMistakes,
		"structure":         structureMistakes, "tools": toolMistakes,
		"endpoint": endpointMistakes, "mcp and variables": mcpAndVariableMistakes,
	}
	for group, cases := range groups {
		for _, tt := range cases {
			t.Run(group+"/"+tt.name, func(t *testing.T) {
				ps := loadProblems(t, tt.data)
				if len(ps) != 1 {
					t.Fatalf("got %d problems, want exactly 1 at %s:\n%v", len(ps), tt.pointer, ps)
				}
				if ps[0].Pointer != tt.pointer || !strings.Contains(ps[0].Message, tt.message) {
					t.Fatalf("problem = %s: %s\nwant     %s: ...%s...", ps[0].Pointer, ps[0].Message, tt.pointer, tt.message)
				}
			})
		}
	}
}

// A Config built in Go skips the schema; Validate must still catch what the
// schema would have.
func TestValidateCatchesSchemaRulesForConfigsBuiltInGo(t *testing.T) {
	temp := 5.0
	tests := []struct {
		name    string
		cfg     Config
		pointer string
		message string
	}{
		{"an unsupported method", Config{BasicSettings: BasicSettings{Name: "x"}, Tools: []HTTPTool{{Name: "t", Description: "d", Endpoint: &Endpoint{URL: "https://a.example.com", Method: "FETCH"}}}}, "/tools/0/endpoint/method", "use GET, POST, PUT, PATCH or DELETE"},
		{"a negative endpoint timeout", Config{BasicSettings: BasicSettings{Name: "x"}, Tools: []HTTPTool{{Name: "t", Description: "d", Endpoint: &Endpoint{URL: "https://a.example.com", Timeout: -1}}}}, "/tools/0/endpoint/timeout", "more than 0"},
		{"a timeout too large for a Duration", Config{BasicSettings: BasicSettings{Name: "x"}, Tools: []HTTPTool{{Name: "t", Description: "d", Endpoint: &Endpoint{URL: "https://a.example.com", Timeout: 1e300}}}}, "/tools/0/endpoint/timeout", "at most 120 seconds"},
		{"a NaN MCP timeout", Config{BasicSettings: BasicSettings{Name: "x"}, MCPServers: []MCPServer{{Name: "m", Transport: "http", URL: "https://a.example.com", Timeout: math.NaN()}}}, "/mcp_servers/0/timeout", "at most 120 seconds"},
		{"an unknown execution", Config{BasicSettings: BasicSettings{Name: "x"}, Tools: []HTTPTool{{Name: "t", Description: "d", Execution: "edge"}}}, "/tools/0/execution", `"server" or "client"`},
		{"a temperature out of range", Config{BasicSettings: BasicSettings{Name: "x"}, LLM: LLMSettings{Temperature: &temp}}, "/llm/temperature", "between 0 and 2"},
		{"a runtime limit out of range", Config{BasicSettings: BasicSettings{Name: "x"}, Runtime: RuntimeSettings{TimeoutSeconds: -5}}, "/runtime/timeout_seconds", "between 1 and 3600"},
		{"an unknown transport", Config{BasicSettings: BasicSettings{Name: "x"}, MCPServers: []MCPServer{{Name: "m", Transport: "ws"}}}, "/mcp_servers/0/transport", `"http", "sse" or "stdio"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := Validate(&tt.cfg)
			if len(ps) != 1 || ps[0].Pointer != tt.pointer || !strings.Contains(ps[0].Message, tt.message) {
				t.Fatalf("problems = %v, want one at %s containing %q", ps, tt.pointer, tt.message)
			}
		})
	}
}

func TestNativeToolsCanBeExtendedByTheOperator(t *testing.T) {
	data := []byte(doc(`"native_tools": ["lookup_weather"]`))
	if _, err := Load(data); err == nil {
		t.Fatal("default options accepted an unregistered native tool")
	}
	opts := Options{NativeTools: append([]string{"lookup_weather"}, DefaultNativeTools()...)}
	if _, err := opts.Load(data); err != nil {
		t.Fatalf("operator-registered native tool rejected: %v", err)
	}
}

func TestActionBooksAcceptEveryKindOfToolReference(t *testing.T) {
	data := doc(
		`"tools": [{"name": "lookup", "description": "d", "execution": "client"}]`,
		`"native_tools": ["current_time"]`,
		`"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "tools": {"allow": ["search"]}}]`,
		`"action_books": [{"condition": "c", "action": "a", "tools": ["lookup", "current_time", "docs", "docs__search"]}]`,
	)
	mustLoad(t, data)
}

func TestValidateLLMProvidersFallbacksAndToolChoice(t *testing.T) {
	tests := []struct {
		name string
		llm  string
		want string // the pointer of the one problem, "" for none
	}{
		{"a provider and fallbacks", `{"provider":"anthropic","model":"claude-sonnet-4-5","fallbacks":[{"provider":"openai","model":"gpt-4o-mini"},{"model":"gpt-4o"}]}`, ""},
		{"an unknown provider", `{"provider":"azure"}`, "/llm/provider"},
		{"a fallback without a model", `{"fallbacks":[{"provider":"openai"}]}`, "/llm/fallbacks/0/model"},
		{"a fallback naming an unknown provider", `{"fallbacks":[{"provider":"nope","model":"m"}]}`, "/llm/fallbacks/0/provider"},
		{"tool_choice naming a tool", `{"tool_choice":"lookup"}`, ""},
		{"tool_choice naming a native tool", `{"tool_choice":"current_time"}`, ""},
		{"tool_choice naming no tool", `{"tool_choice":"lookup_order"}`, "/llm/tool_choice"},
		{"tool_choice required", `{"tool_choice":"required"}`, ""},
		{"a forced tool with thinking", `{"tool_choice":"required","thinking_budget":2048}`, "/llm/tool_choice"},
		{"a thinking budget too small", `{"thinking_budget":100}`, "/llm/thinking_budget"},
		{"a quota downgrade", `{"model":"gpt-4o","quota_downgrade":{"at":0.8,"provider":"openai","model":"gpt-4o-mini"}}`, ""},
		{"a quota downgrade past the whole quota", `{"quota_downgrade":{"at":1.5,"model":"gpt-4o-mini"}}`, "/llm/quota_downgrade/at"},
		{"a quota downgrade to an unknown provider", `{"quota_downgrade":{"at":0.5,"provider":"nope","model":"m"}}`, "/llm/quota_downgrade/provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := `{"basic_settings":{"name":"B"},"native_tools":["current_time"],"tools":[{"name":"lookup","description":"d","endpoint":{"url":"https://example.com/x"}}],"llm":` + tt.llm + `}`
			_, err := Options{Providers: []string{"openai", "anthropic"}}.Load([]byte(raw))
			var ps Problems
			if err != nil && !errors.As(err, &ps) {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && ps != nil:
				t.Fatalf("problems: %v", ps)
			case tt.want != "" && (len(ps) != 1 || ps[0].Pointer != tt.want):
				t.Fatalf("problems %v, want one at %s", ps, tt.want)
			}
		})
	}
}
