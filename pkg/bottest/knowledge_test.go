package bottest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/bottest"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
)

func knowledgeBot(t *testing.T, mode string) *botconfig.Bot {
	t.Helper()
	var opts botconfig.Options
	bot, err := opts.Compile(&botconfig.Config{BasicSettings: botconfig.BasicSettings{Name: "Help"},
		Knowledge: &botconfig.KnowledgeSettings{Bases: []string{"help"}, Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	return bot
}

const knowledgeSuite = `{
  "knowledge": [
    {"title": "refunds.md", "text": "Refunds take five business days.", "locator": "Refunds"},
    {"title": "plans.md", "text": "Plan A costs 10 euros."}
  ],
  "tests": [%s]
}`

func runKnowledge(t *testing.T, bot *botconfig.Bot, test string, opts bottest.Options) bottest.Result {
	t.Helper()
	suite, err := bottest.Parse([]byte(strings.Replace(knowledgeSuite, "%s", test, 1)))
	if err != nil {
		t.Fatal(err)
	}
	res := bottest.Run(context.Background(), bot, suite, opts)
	if len(res) != 1 {
		t.Fatalf("%d results", len(res))
	}
	return res[0]
}

func TestRetrievedAndCitedExpectations(t *testing.T) {
	const searchThenCite = `{"name": "refunds", "turns": [{"user": "How long do refunds take?",
  "model": [{"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "refunds"}}]}, {"text": "Five business days [1]."}],
  "expect": {"tool_calls": [{"name": "search_knowledge"}], "retrieved": RETRIEVED, "cited": CITED}}]}`
	tests := []struct {
		name, retrieved, cited string
		fail                   string
	}{
		{"the searched and cited sources pass", `["refunds.md", "plans.md"]`, `["refunds.md"]`, ""},
		{"a source the reply does not cite fails", `["refunds.md"]`, `["plans.md"]`, "plans.md is not among the sources cited (refunds.md)"},
		{"cited [] fails a reply that cites", `["refunds.md"]`, `[]`, "want no sources cited, got refunds.md"},
		{"a source never found fails", `["pricing.md"]`, `["refunds.md"]`, "pricing.md is not among the sources retrieved"},
	}
	bot := knowledgeBot(t, botconfig.KnowledgeModeTool)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			test := strings.NewReplacer("RETRIEVED", tc.retrieved, "CITED", tc.cited).Replace(searchThenCite)
			res := runKnowledge(t, bot, test, bottest.Options{})
			switch {
			case tc.fail == "" && !res.Passed:
				t.Fatalf("failed: %v", res.Failures)
			case tc.fail != "" && (res.Passed || !strings.Contains(strings.Join(res.Failures, "\n"), tc.fail)):
				t.Fatalf("failures %v, want one saying %q", res.Failures, tc.fail)
			}
		})
	}
	t.Run("auto mode retrieves before the model answers", func(t *testing.T) {
		res := runKnowledge(t, knowledgeBot(t, botconfig.KnowledgeModeAuto), `{"name": "auto", "turns": [{"user": "refunds?",
  "model": [{"text": "Five business days."}], "expect": {"tool_calls": [], "retrieved": ["refunds.md"], "cited": []}}]}`, bottest.Options{})
		if !res.Passed {
			t.Fatalf("failed: %v", res.Failures)
		}
	})
	t.Run("without passages in the file, the server's search answers", func(t *testing.T) {
		suite, err := bottest.Parse([]byte(`{"tests": [{"name": "server", "turns": [{"user": "refunds?",
  "model": [{"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "refunds"}}]}, {"text": "See [1]."}],
  "expect": {"retrieved": ["Refunds"], "cited": ["Refunds"]}}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var asked string
		search := func(_ context.Context, q string) ([]cite.Passage, error) {
			asked = q
			return []cite.Passage{{Source: "src_1", Title: "Refunds", Text: "Five days."}}, nil
		}
		res := bottest.Run(context.Background(), bot, suite, bottest.Options{Knowledge: search})
		if !res[0].Passed || asked != "refunds" {
			t.Fatalf("result %+v, asked %q", res[0], asked)
		}
	})
}

func TestPassagesNeedATitleAndText(t *testing.T) {
	_, err := bottest.Parse([]byte(`{"knowledge": [{"title": "", "text": "x"}], "tests": [{"name": "a", "knowledge": [{"title": "t", "text": " "}], "turns": [{"user": "hi"}]}]}`))
	var ps botconfig.Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Pointer != "/knowledge/0/title" || ps[1].Pointer != "/tests/0/knowledge/0/text" {
		t.Fatalf("problems %v", err)
	}
}
