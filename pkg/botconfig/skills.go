package botconfig

import (
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
)

// Skill is a bundle of instructions and tools the model loads when a task
// needs it (seed 004's Agent Skills): the prompt lists only its name and
// description, and its tools stay hidden until it is loaded.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Instructions are what loading the skill gives the model.
	Instructions string `json:"instructions"`
	// Tools are the names of the bot's tools (tools, native_tools, agents,
	// an MCP server for all its tools, or one "<server>__<tool>") that are
	// offered only once the skill is loaded.
	Tools []string `json:"tools,omitempty"`
}

// LoadSkillTool is the name of the built-in tool that loads a skill.
const LoadSkillTool = "load_skill"

// maxSkillInstructions bounds one skill's instructions: they enter the
// context whole when the skill is loaded.
const maxSkillInstructions = 20000

// skills checks the skills entries. It runs after every tool is claimed, so
// a skill's tools resolve as action books' do.
func (c *checker) skills() {
	if len(c.cfg.Skills) == 0 {
		return
	}
	c.claim(LoadSkillTool, "/skills")
	seen := map[string]string{}
	for i, s := range c.cfg.Skills {
		at := ptr("/skills", i)
		switch prev, dup := seen[s.Name]; {
		case !llm.ValidToolName(s.Name):
			c.ps.add(ptr(at, "name"), "skill name %q must be 1-64 letters, digits, '_' or '-'", s.Name)
		case dup:
			c.ps.add(ptr(at, "name"), "skill %q is already defined at %s; skill names must be unique", s.Name, prev)
		default:
			seen[s.Name] = at
		}
		if strings.TrimSpace(s.Description) == "" {
			c.ps.add(ptr(at, "description"), "description is empty; tell the model when to load this skill")
		}
		switch n := len(strings.TrimSpace(s.Instructions)); {
		case n == 0:
			c.ps.add(ptr(at, "instructions"), "instructions are empty; say what the model should do with this skill")
		case n > maxSkillInstructions:
			c.ps.add(ptr(at, "instructions"), "instructions must be at most %d bytes", maxSkillInstructions)
		}
		for j, name := range s.Tools {
			if name == LoadSkillTool || !c.toolExists(name) {
				c.ps.add(ptr(ptr(at, "tools"), j), "unknown tool %q in skill; declare it in tools, native_tools, agents or mcp_servers", name)
			}
			if choice := c.cfg.LLM.ToolChoice; choice == name || strings.HasPrefix(choice, name+MCPToolSeparator) {
				// The model is not offered the tool before the skill is
				// loaded, so it could not be forced to call it.
				c.ps.add("/llm/tool_choice", "tool_choice %q names a tool of skill %q, which is offered only once the skill is loaded; force another tool or take it out of the skill", choice, s.Name)
			}
		}
	}
}

// SkillSpec is one compiled skill.
type SkillSpec struct {
	Name         string
	Description  string
	Instructions string
	Tools        []string
}

func compileSkills(skills []Skill) []SkillSpec {
	var out []SkillSpec
	for _, s := range skills {
		out = append(out, SkillSpec{Name: s.Name, Description: oneLine(s.Description),
			Instructions: strings.TrimSpace(s.Instructions), Tools: slices.Clone(s.Tools)})
	}
	return out
}

// skillSection lists the skills by name and description only; their
// instructions stay out of the prompt until loaded.
func skillSection(skills []Skill) string {
	if len(skills) == 0 {
		return ""
	}
	lines := []string{"## Skills",
		"Skills hold instructions and tools for particular tasks. When a task matches a skill's description, call " + LoadSkillTool + " with its name before you act, then follow what it returns. A loaded skill stays loaded for the rest of the conversation."}
	for _, s := range skills {
		lines = append(lines, "- "+s.Name+": "+oneLine(s.Description))
	}
	return strings.Join(lines, "\n")
}
