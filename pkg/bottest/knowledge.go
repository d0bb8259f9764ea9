package bottest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

// Passage is a piece of the bot's knowledge a test supplies: every
// search of the test finds these, in order, up to the bot's top_k. A test
// run by the server without passages searches the tenant's real bases.
type Passage struct {
	Title   string `json:"title"`
	Text    string `json:"text"`
	URL     string `json:"url,omitempty"`
	Locator string `json:"locator,omitempty"`
}

// KnowledgeSearch searches the bot's knowledge bases for a test (the
// server's own search of the tenant's bases).
type KnowledgeSearch func(ctx context.Context, query string) ([]cite.Passage, error)

// testKnowledge is one test's knowledge: a Book numbering what its
// searches found, and what each turn retrieved.
type testKnowledge struct {
	bot       *botconfig.Bot
	search    KnowledgeSearch
	book      *cite.Book
	retrieved []string // titles the turn's searches found
	lastQuery string
	lastFound string
}

// newTestKnowledge is the knowledge of a test of bot: the test's passages,
// or else search; nil when the bot answers from no knowledge base.
func newTestKnowledge(bot *botconfig.Bot, passages []Passage, search KnowledgeSearch) *testKnowledge {
	if len(bot.Knowledge.Bases) == 0 {
		return nil
	}
	if passages != nil || search == nil {
		fixed := make([]cite.Passage, len(passages))
		for i, p := range passages {
			fixed[i] = cite.Passage{Source: p.Title, Title: p.Title, URL: p.URL, Locator: p.Locator, Chunk: i, Text: p.Text}
		}
		search = func(context.Context, string) ([]cite.Passage, error) {
			return fixed[:min(len(fixed), bot.Knowledge.TopK)], nil
		}
	}
	return &testKnowledge{bot: bot, search: search, book: cite.NewBook()}
}

func (k *testKnowledge) find(ctx context.Context, query string) ([]cite.Passage, error) {
	found, err := k.search(ctx, query)
	for _, p := range found {
		if !slices.Contains(k.retrieved, p.Title) {
			k.retrieved = append(k.retrieved, p.Title)
		}
	}
	return found, err
}

// Search implements builtin.KnowledgeSearch, for search_knowledge.
func (k *testKnowledge) Search(ctx context.Context, query string) (string, error) {
	found, err := k.find(ctx, query)
	if err != nil {
		return "", err
	}
	return k.book.Format(found, 0), nil
}

// beforeModelCall is auto mode, as dialogs run it.
func (k *testKnowledge) beforeModelCall(ctx context.Context, msgs []llm.Message, _ int) (string, error) {
	query := ""
	for i := len(msgs) - 1; i >= 0 && query == ""; i-- {
		if msgs[i].Role == llm.RoleUser {
			query = strings.TrimSpace(msgs[i].Text())
		}
	}
	if query == "" {
		return "", nil
	}
	if query != k.lastQuery {
		found, err := k.find(ctx, query)
		if err != nil {
			return "", err
		}
		k.lastQuery, k.lastFound = query, "## Knowledge base passages\n"+k.book.Format(found, 0)
	}
	return k.lastFound, nil
}

// checkKnowledge compares a turn's retrieved and cited sources with the
// expectations: every name listed must be among them, an empty list
// wants none.
func checkKnowledge(e Expect, k *testKnowledge, reply string) []string {
	var fails []string
	var retrieved, cited []string
	if k != nil {
		retrieved = k.retrieved
		for _, c := range k.book.Cited(reply) {
			cited = append(cited, c.Title)
		}
	}
	for _, ex := range []struct {
		what string
		want *[]string
		got  []string
	}{{"retrieved", e.Retrieved, retrieved}, {"cited", e.Cited, cited}} {
		switch {
		case ex.want == nil:
		case len(*ex.want) == 0 && len(ex.got) > 0:
			fails = append(fails, fmt.Sprintf("want no sources %s, got %s", ex.what, strings.Join(ex.got, ", ")))
		default:
			for _, w := range *ex.want {
				if !slices.Contains(ex.got, w) {
					fails = append(fails, fmt.Sprintf("%s is not among the sources %s (%s)", w, ex.what, strings.Join(ex.got, ", ")))
				}
			}
		}
	}
	return fails
}

// knowledgeTool is k as search_knowledge's backend; nil (not a nil
// *testKnowledge) without knowledge.
func knowledgeTool(k *testKnowledge) builtin.KnowledgeSearch {
	if k == nil {
		return nil
	}
	return k
}
