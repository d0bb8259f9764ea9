package botrun

import (
	"strings"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// loopSkills maps the bot's skills onto the loop's. A skill may name an
// MCP server for all its tools; that becomes the server's tools this
// dialog has (an unreachable server has none).
func loopSkills(skills []botconfig.SkillSpec, tools *tool.Set) []agent.Skill {
	if len(skills) == 0 {
		return nil
	}
	out := make([]agent.Skill, len(skills))
	for i, s := range skills {
		out[i] = agent.Skill{Name: s.Name, Description: s.Description, Instructions: s.Instructions, Tools: skillTools(s.Tools, tools)}
	}
	return out
}

func skillTools(names []string, tools *tool.Set) []string {
	var out []string
	for _, n := range names {
		if tools == nil {
			break
		}
		if _, ok := tools.Lookup(n); ok {
			out = append(out, n)
			continue
		}
		for _, d := range tools.Definitions() {
			if strings.HasPrefix(d.Name, n+botconfig.MCPToolSeparator) {
				out = append(out, d.Name)
			}
		}
	}
	return out
}
