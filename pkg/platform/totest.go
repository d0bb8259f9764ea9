package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/bottest"
	"github.com/parleyhq/parley/pkg/store"
)

// ToTestInput chooses what a test made from a dialog expects; the turns,
// the scripted model and the fixtures come from the dialog itself.
type ToTestInput struct {
	// Name names the test; by default "dialog <id>".
	Name string
	// ToolsCalled makes each turn expect the tools it called, by name.
	ToolsCalled bool
	// ReplyContains are texts the last turn's reply must contain.
	ReplyContains []string
	// NoHandoff makes every turn expect no handoff.
	NoHandoff bool
	// Retrieved are titles of knowledge sources the last turn's searches
	// must find. search_knowledge is never a fixture, so the test searches
	// the bases of the version it runs on: a question the knowledge did not
	// cover fails until a version's bases do.
	Retrieved []string
	// Save adds the test to the tests of the bot's latest version, saved
	// as a new version (not published), so the publish gate and parley
	// test run it.
	Save bool
}

// ToTest is a conversation test made from a dialog.
type ToTest struct {
	// Bot is the bot's slug.
	Bot  string
	Test bottest.Case
	// Version is the version saved with the test (Save); 0 otherwise.
	Version int
}

// toolsWithoutFixtures run for real in a test (docs/testing.md): native
// tools, load_skill and search_knowledge (the version's own bases).
func toolsWithoutFixtures() []string {
	return append(botconfig.DefaultNativeTools(), "load_skill", botconfig.KnowledgeSearchTool)
}

// FromDialog writes a conversation test (docs/testing.md) from the
// tenant's dialog: each user message a turn, the bot's replies its
// scripted model, the results of its tool calls the fixtures, and the
// expectations in chosen. Readers of dialogs may make one; saving it
// also needs the right to write versions.
func (te Tests) FromDialog(ctx context.Context, p *Principal, tenant, dialogID string, in ToTestInput) (ToTest, error) {
	s := te.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	if err != nil {
		return ToTest{}, err
	}
	ts := s.store.Tenant(t.ID)
	d, err := ts.Dialogs().Get(ctx, dialogID)
	if err != nil {
		return ToTest{}, s.storeErr(ctx, "to test", "dialog", "", err)
	}
	msgs, err := ts.Messages().List(ctx, d.ID, 0)
	if err != nil {
		return ToTest{}, s.internal(ctx, "to test: messages", err)
	}
	calls, err := ts.Messages().ToolCalls(ctx, d.ID)
	if err != nil {
		return ToTest{}, s.internal(ctx, "to test: tool calls", err)
	}
	bot, err := ts.Bots().Get(ctx, d.BotID)
	if err != nil {
		return ToTest{}, s.storeErr(ctx, "to test: bot", "bot", "", err)
	}
	tc, err := testFromDialog(d, msgs, calls, in)
	if err != nil {
		return ToTest{}, err
	}
	out := ToTest{Bot: bot.Slug, Test: tc}
	if !in.Save {
		return out, nil
	}
	latest, err := ts.Versions().Latest(ctx, bot.ID)
	if err != nil {
		return ToTest{}, s.storeErr(ctx, "to test: version", "version", "", err)
	}
	suite := bottest.Suite{}
	if latest.Tests != "" {
		if err := json.Unmarshal([]byte(latest.Tests), &suite); err != nil {
			return ToTest{}, s.internal(ctx, "to test: stored tests", err)
		}
	}
	out.Test.Name = uniqueName(suite.Tests, tc.Name)
	suite.Tests = append(suite.Tests, out.Test)
	tests, err := json.MarshalIndent(suite, "", "  ")
	if err != nil {
		return ToTest{}, s.internal(ctx, "to test: encode", err)
	}
	v, _, err := s.Versions().CreateWithTests(ctx, p, tenant, bot.Slug, []byte(latest.Config), tests)
	if err != nil {
		return ToTest{}, err
	}
	out.Version = v.Number
	return out, nil
}

// testFromDialog builds the test: a turn per user message that got a
// reply, each with the model's replies scripted as they were.
func testFromDialog(d *store.Dialog, msgs []store.Message, calls []store.ToolCall, in ToTestInput) (bottest.Case, error) {
	tc := bottest.Case{Name: strings.TrimSpace(in.Name), Fixtures: map[string]bottest.Fixture{}}
	if tc.Name == "" {
		tc.Name = "dialog " + d.ID
	}
	vars := map[string]string{}
	if err := json.Unmarshal([]byte(d.Context), &vars); err == nil && len(vars) > 0 {
		tc.Vars = vars
	}
	live := toolsWithoutFixtures()
	for _, c := range calls {
		if _, ok := tc.Fixtures[c.Name]; ok || slices.Contains(live, c.Name) {
			continue
		}
		result, _ := json.Marshal(c.Result) // a string always marshals
		tc.Fixtures[c.Name] = bottest.Fixture{Result: result, IsError: c.IsError}
	}
	if len(tc.Fixtures) == 0 {
		tc.Fixtures = nil
	}
	var turn *bottest.Turn
	var called []bottest.ExpectCall
	closeTurn := func() {
		if turn == nil || len(turn.Model) == 0 {
			return
		}
		if in.ToolsCalled {
			c := append([]bottest.ExpectCall{}, called...)
			turn.Expect.ToolCalls = &c
		}
		if in.NoHandoff {
			no := false
			turn.Expect.Handoff = &no
		}
		tc.Turns = append(tc.Turns, *turn)
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Kind {
		case "user":
			if m.Text == "" {
				continue
			}
			closeTurn()
			turn, called = &bottest.Turn{User: m.Text}, nil
		case "assistant":
			if turn == nil {
				continue // a greeting or seeded history before the first question
			}
			var reply bottest.ModelReply
			reply.Text, reply.ToolCalls = blocksOf(m.Content)
			for _, c := range reply.ToolCalls {
				called = append(called, bottest.ExpectCall{Name: c.Name})
			}
			if reply.Text != "" || len(reply.ToolCalls) > 0 {
				turn.Model = append(turn.Model, reply)
			}
		}
	}
	closeTurn()
	if len(tc.Turns) == 0 {
		return tc, Invalid(Detail{Pointer: "/dialog", Message: "the dialog has no user message the bot answered; there is nothing to test"})
	}
	if len(in.ReplyContains) > 0 {
		tc.Turns[len(tc.Turns)-1].Expect.ReplyContains = in.ReplyContains
	}
	if len(in.Retrieved) > 0 {
		r := slices.Clone(in.Retrieved)
		tc.Turns[len(tc.Turns)-1].Expect.Retrieved = &r
	}
	return tc, nil
}

// blocksOf decodes what a test needs of a stored message's content (a
// JSON array of llm.Block): its text and its tool calls.
func blocksOf(content string) (text string, calls []bottest.ToolCallIn) {
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &blocks); err != nil {
		return "", nil
	}
	for _, b := range blocks {
		var kind, part string
		_ = json.Unmarshal(b["type"], &kind)
		switch kind {
		case "text":
			_ = json.Unmarshal(b["text"], &part)
			text += part
		case "tool_use":
			var use map[string]json.RawMessage
			if json.Unmarshal(b["tool_use"], &use) != nil {
				continue
			}
			var name string
			_ = json.Unmarshal(use["name"], &name)
			calls = append(calls, bottest.ToolCallIn{Name: name, Arguments: use["arguments"]})
		}
	}
	return text, calls
}

// uniqueName is name, or name with a number when a test has it already.
func uniqueName(tests []bottest.Case, name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(tests, func(c bottest.Case) bool { return c.Name == n })
	}
	out := name
	for i := 2; taken(out); i++ {
		out = fmt.Sprintf("%s (%d)", name, i)
	}
	return out
}
