package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// LoadSkillTool is the built-in tool the model calls to load a skill.
const LoadSkillTool = "load_skill"

// Skill is a bundle of instructions and tools the model loads when a task
// needs it: the system prompt names it, loading it returns its
// instructions, and its tools are offered from then on, for the rest of
// the dialog (State.Skills keeps what is loaded).
type Skill struct {
	Name         string
	Description  string
	Instructions string
	// Tools are the names of Config.Tools offered only once the skill is
	// loaded. A tool of several skills is offered once any is loaded.
	Tools []string
}

// skillBook is the agent's skills, built once by New; nil when the config
// has none, so a bot without skills pays nothing for them.
type skillBook struct {
	byName map[string]*Skill
	// gated are the definitions of the tools that wait for a skill.
	gated map[string]llm.ToolDefinition
	// order lists gated tools in Config.Tools order, so the tools offered
	// keep a stable order whatever the loading order.
	order []string
}

func newSkillBook(skills []Skill, defs []llm.ToolDefinition) (*skillBook, []llm.ToolDefinition) {
	b := &skillBook{byName: map[string]*Skill{}, gated: map[string]llm.ToolDefinition{}}
	gate := map[string]bool{}
	for i := range skills {
		b.byName[skills[i].Name] = &skills[i]
		for _, t := range skills[i].Tools {
			gate[t] = true
		}
	}
	var open []llm.ToolDefinition
	for _, d := range defs {
		if gate[d.Name] {
			b.gated[d.Name] = d
			b.order = append(b.order, d.Name)
		} else {
			open = append(open, d)
		}
	}
	return b, append(open, loadSkillDefinition(skills))
}

func loadSkillDefinition(skills []Skill) llm.ToolDefinition {
	names := make([]string, len(skills))
	for i, s := range skills {
		names[i] = s.Name
	}
	enum, _ := json.Marshal(names)
	return llm.ToolDefinition{
		Name:        LoadSkillTool,
		Description: "Load one of the skills the system prompt lists: returns its instructions and makes its tools available for the rest of the conversation.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The skill's name","enum":` + string(enum) + `}},"required":["name"]}`),
	}
}

// offered is what the model is offered: the open tools, load_skill, and
// the tools of the skills loaded.
func (b *skillBook) offered(open []llm.ToolDefinition, loaded []string) []llm.ToolDefinition {
	if len(loaded) == 0 {
		return open
	}
	out := slices.Clip(open)
	for _, name := range b.order {
		if b.unlocks(loaded, name) {
			out = append(out, b.gated[name])
		}
	}
	return out
}

// unlocks reports whether one of the loaded skills offers tool name.
func (b *skillBook) unlocks(loaded []string, name string) bool {
	for _, s := range loaded {
		if sk := b.byName[s]; sk != nil && slices.Contains(sk.Tools, name) {
			return true
		}
	}
	return false
}

// lockedCall answers a call to a tool whose skill is not loaded, as if
// the tool did not exist, naming the skill to load; ok is false for every
// other call.
func (b *skillBook) lockedCall(loaded []string, name string) (tool.Result, bool) {
	if _, gated := b.gated[name]; !gated || b.unlocks(loaded, name) {
		return tool.Result{}, false
	}
	var skills []string
	for _, s := range b.byName {
		if slices.Contains(s.Tools, name) {
			skills = append(skills, s.Name)
		}
	}
	slices.Sort(skills)
	return tool.Errorf(fmt.Sprintf("tool %q is not available yet; call %s with one of: %s", name, LoadSkillTool, strings.Join(skills, ", "))), true
}

// load answers a load_skill call: the skill's instructions and its tools,
// adding the skill to the dialog's loaded skills. Loading a skill again
// repeats its instructions (a summary may have replaced them).
func (r *run) load(args json.RawMessage) tool.Result {
	b := r.a.skills
	var a struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(args, &a)
	sk := b.byName[a.Name]
	if sk == nil {
		names := make([]string, 0, len(b.byName))
		for n := range b.byName {
			names = append(names, n)
		}
		slices.Sort(names)
		res := tool.Errorf(fmt.Sprintf("unknown skill %q; the skills are: %s", a.Name, strings.Join(names, ", ")))
		res.Meta.Kind = "skill"
		return res
	}
	if !slices.Contains(r.st.Skills, sk.Name) {
		r.st.Skills = append(r.st.Skills, sk.Name)
		r.tools = b.offered(r.a.defs, r.st.Skills)
	}
	text := "Skill " + sk.Name + " loaded. Follow these instructions:\n\n" + sk.Instructions
	if len(sk.Tools) > 0 {
		text += "\n\nTools now available: " + strings.Join(sk.Tools, ", ")
	}
	return tool.Result{Content: text, Meta: tool.Meta{Kind: "skill"}}
}
