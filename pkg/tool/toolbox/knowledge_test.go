package toolbox_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/toolbox"
)

// searchFunc is a KnowledgeSearch of a function.
type searchFunc func(ctx context.Context, query string) (string, error)

func (f searchFunc) Search(ctx context.Context, query string) (string, error) { return f(ctx, query) }

func TestSearchKnowledgeIsOfferedInToolModeOnly(t *testing.T) {
	var asked string
	k := searchFunc(func(_ context.Context, q string) (string, error) {
		asked = q
		if q == "nothing" {
			return "", nil
		}
		return "[1] Refunds\nRefunds take 5 days.", nil
	})
	build := func(mode string) *toolbox.Box {
		var opts botconfig.Options
		bot, err := opts.Compile(&botconfig.Config{BasicSettings: botconfig.BasicSettings{Name: "B"},
			Knowledge: &botconfig.KnowledgeSettings{Bases: []string{"kb"}, Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		box, err := toolbox.Build(context.Background(), bot, toolbox.Options{Natives: builtin.NewRegistry(), Knowledge: k})
		if err != nil {
			t.Fatal(err)
		}
		return box
	}
	if _, ok := build(botconfig.KnowledgeModeAuto).Set.Lookup(botconfig.KnowledgeSearchTool); ok {
		t.Fatal("auto mode offers search_knowledge")
	}
	set := build(botconfig.KnowledgeModeTool).Set
	res := set.Call(context.Background(), botconfig.KnowledgeSearchTool, json.RawMessage(`{"query": "refund time"}`))
	if res.IsError || res.Content != "[1] Refunds\nRefunds take 5 days." || asked != "refund time" {
		t.Fatalf("call: %+v (asked %q)", res, asked)
	}
	res = set.Call(context.Background(), botconfig.KnowledgeSearchTool, json.RawMessage(`{"query": "nothing"}`))
	if res.IsError || res.Content == "" {
		t.Fatalf("a search without results: %+v", res)
	}
	res = set.Call(context.Background(), botconfig.KnowledgeSearchTool, json.RawMessage(`{}`))
	if !res.IsError {
		t.Fatalf("a call without query: %+v", res)
	}
}
