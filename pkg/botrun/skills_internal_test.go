package botrun

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

type namedTool string

func (n namedTool) Definition() tool.Definition { return tool.Definition{Name: string(n)} }
func (namedTool) Call(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}

func TestASkillNamingAnMCPServerGetsTheServersToolsThisDialogHas(t *testing.T) {
	set, err := tool.NewSet(nil, namedTool("lookup"), namedTool("docs__search"), namedTool("docs__fetch"), namedTool("wiki__search"))
	if err != nil {
		t.Fatal(err)
	}
	skills := loopSkills([]botconfig.SkillSpec{{Name: "research", Tools: []string{"docs", "lookup", "gone__tool"}}}, set)
	if got := skills[0].Tools; !slices.Equal(got, []string{"docs__search", "docs__fetch", "lookup"}) {
		t.Fatalf("skill tools = %v", got)
	}
}
