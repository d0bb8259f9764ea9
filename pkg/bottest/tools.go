package bottest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

// anyObject is the argument schema of an MCP fixture that declares none.
var anyObject = json.RawMessage(`{"type":"object"}`)

// failures collects a test's failed expectations; tools add to it from the
// loop's goroutines.
type failures struct {
	mu   sync.Mutex
	list []string
}

func (f *failures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, fmt.Sprintf(format, args...))
}

// take returns the failures so far and forgets them.
func (f *failures) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := f.list
	f.list = nil
	return list
}

// fixtureTool answers every call with its fixture; without one, the call
// fails the test, so no test ever reaches the network.
type fixtureTool struct {
	def     tool.Definition
	fixture *Fixture
	fail    *failures
}

func (t fixtureTool) Definition() tool.Definition { return t.def }

func (t fixtureTool) Call(_ context.Context, args json.RawMessage) (tool.Result, error) {
	if t.fixture == nil {
		t.fail.add("the model called %s %s, which has no fixture in this test", t.def.Name, compact(args))
		return tool.Errorf("this tool is not available in the test"), nil
	}
	return tool.Result{Content: fixtureContent(t.fixture.Result), IsError: t.fixture.IsError, Meta: tool.Meta{Kind: "fixture"}}, nil
}

// fixtureContent is a string result as is and any other JSON as its text.
func fixtureContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return compact(raw)
}

// buildTools is the test's tool set: the bot's config tools and MCP tools
// answered by fixtures, its native tools real unless a fixture replaces
// them. A fixture naming no tool of the bot is a mistake in the test file.
func buildTools(bot *botconfig.Bot, fixtures map[string]Fixture, natives *builtin.Registry, env builtin.Env, fail *failures) (*tool.Set, error) {
	used := map[string]bool{}
	fixtureFor := func(name string) *Fixture {
		f, ok := fixtures[name]
		if !ok {
			return nil
		}
		used[name] = true
		return &f
	}
	var tools []tool.Tool
	for _, spec := range bot.Tools {
		def := tool.Definition{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters}
		tools = append(tools, fixtureTool{def: def, fixture: fixtureFor(spec.Name), fail: fail})
	}
	real, err := natives.Build(bot.NativeTools, env)
	if err != nil {
		return nil, err
	}
	for _, t := range real {
		if f := fixtureFor(t.Definition().Name); f != nil {
			t = fixtureTool{def: t.Definition(), fixture: f, fail: fail}
		}
		tools = append(tools, t)
	}
	if bot.Knowledge.Mode == botconfig.KnowledgeModeTool && env.Knowledge != nil {
		t := builtin.KnowledgeTools(env.Knowledge)[0]
		if f := fixtureFor(t.Definition().Name); f != nil {
			t = fixtureTool{def: t.Definition(), fixture: f, fail: fail}
		}
		tools = append(tools, t)
	}
	// An agent is another bot, which a test of this one does not run: its
	// answers come from fixtures, like an HTTP tool's.
	for _, a := range bot.Agents {
		def := tool.Definition{Name: a.Name, Description: a.Description, Parameters: botconfig.AgentInputSchema}
		tools = append(tools, fixtureTool{def: def, fixture: fixtureFor(a.Name), fail: fail})
	}
	for _, name := range sortedKeys(fixtures) {
		if used[name] || !isMCPTool(bot, name) {
			continue
		}
		f := fixtureFor(name)
		params := f.Parameters
		if len(params) == 0 {
			params = anyObject
		}
		tools = append(tools, fixtureTool{def: tool.Definition{Name: name, Description: "MCP tool " + name + " (fixture)", Parameters: params}, fixture: f, fail: fail})
	}
	var unknown []string
	for name := range fixtures {
		if !used[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("fixtures name tools the bot does not have: %s", strings.Join(unknown, ", "))
	}
	return tool.NewSet(nil, tools...)
}

func isMCPTool(bot *botconfig.Bot, name string) bool {
	for _, s := range bot.MCPServers {
		if strings.HasPrefix(name, s.Name+botconfig.MCPToolSeparator) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
