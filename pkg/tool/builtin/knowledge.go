package builtin

import (
	"context"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// KnowledgeSearch searches the bot's knowledge bases for one dialog. The
// platform implements it: which bases, how many passages, which sources
// the dialog's user may read, and the numbering the answer cites.
type KnowledgeSearch interface {
	// Search returns the passages found for query, numbered and written
	// for the model; "" when nothing matched.
	Search(ctx context.Context, query string) (string, error)
}

// KnowledgeTools is search_knowledge bound to k, the tool a bot whose
// knowledge mode is "tool" offers.
func KnowledgeTools(k KnowledgeSearch) []tool.Tool {
	return []tool.Tool{searchKnowledge.Bind(Env{Knowledge: k})}
}

type searchKnowledgeArgs struct {
	Query string `json:"query" jsonschema:"what to look up, as a short question or keywords"`
}

var searchKnowledge = define(botconfig.KnowledgeSearchTool,
	"Search the knowledge base (help articles, policies, documentation) for passages that answer a question. Results are numbered [1], [2], ...; cite the numbers of the passages you use in your answer.",
	func(ctx context.Context, env Env, args searchKnowledgeArgs) (tool.Result, error) {
		if strings.TrimSpace(args.Query) == "" {
			return tool.Errorf("query is empty; say what to look up"), nil
		}
		found, err := env.Knowledge.Search(ctx, args.Query)
		if err != nil {
			return tool.Result{}, err
		}
		if found == "" {
			return tool.Result{Content: "Nothing in the knowledge base matches this query."}, nil
		}
		return tool.Result{Content: found}, nil
	})
