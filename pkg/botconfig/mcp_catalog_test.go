package botconfig

import (
	"strings"
	"testing"
)

func TestAnActionBookMayNameAServersResourceAndPromptToolsOnlyWhenTurnedOn(t *testing.T) {
	doc := func(flags string) string {
		return `{"basic_settings": {"name": "B"},
  "mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com/mcp", "tools": {"allow": ["search"]}` + flags + `}],
  "action_books": [{"condition": "When asked", "action": "Look it up", "tools": ["docs__read_resource", "docs__get_prompt"]}]}`
	}
	mustCompile(t, doc(`, "resources": true, "prompts": true`))
	ps := loadProblems(t, doc(`, "resources": true`))
	if len(ps) != 1 || ps[0].Pointer != "/action_books/0/tools/1" || !strings.Contains(ps[0].Message, "docs__get_prompt") {
		t.Fatalf("problems %v, want docs__get_prompt refused without prompts", ps)
	}
}
