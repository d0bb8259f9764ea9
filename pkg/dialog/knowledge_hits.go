package dialog

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/store"
)

// unansweredKnowledgeMiss marks a question whose knowledge searches found
// nothing good enough (docs/insights.md).
const unansweredKnowledgeMiss = "knowledge_miss"

// knowledgeTally is what a run's knowledge searches found since its last
// reply: a reply after searches that all found nothing is a knowledge
// miss, and its question counts as unanswered.
type knowledgeTally struct {
	mu              sync.Mutex
	searched, found bool
}

// countSearch counts one search of the bot's bases in analytics: a hit
// when it returned at least one passage (SearchForBot keeps only passages
// at or above the bot's min_score), in tool and auto mode alike. A search
// that failed counts as a search without a hit.
func (k *runKnowledge) countSearch(passages int) {
	k.tally.mu.Lock()
	k.tally.searched = true
	k.tally.found = k.tally.found || passages > 0
	k.tally.mu.Unlock()
	roll, ok := rollupOf(k.d, k.r.now())
	if !ok {
		return
	}
	roll.KnowledgeSearch = 1
	if passages > 0 {
		roll.KnowledgeHits = 1
	}
	k.r.meter.addRollup(roll)
}

// takeMiss reports whether the searches since the previous reply all
// found nothing, and starts the tally again for the next reply.
func (k *runKnowledge) takeMiss() bool {
	if k == nil {
		return false
	}
	k.tally.mu.Lock()
	defer k.tally.mu.Unlock()
	miss := k.tally.searched && !k.tally.found
	k.tally.searched, k.tally.found = false, false
	return miss
}

// markKnowledgeMiss marks the run's reply row when the searches since
// the previous reply all found nothing. Only a reply without tool calls
// takes the tally: in tool mode the model's call of search_knowledge
// comes before the search.
func (run *dialogRun) markKnowledgeMiss(row *store.Message, m agent.Message) error {
	if m.Kind != agent.KindAssistant || len(m.ToolUses()) > 0 || !run.knowledge.takeMiss() {
		return nil
	}
	var meta messageMeta
	if row.Meta != emptyMeta {
		if err := json.Unmarshal([]byte(row.Meta), &meta); err != nil {
			return fmt.Errorf("message meta: %w", err)
		}
	}
	meta.KnowledgeMiss = true
	s, err := marshalMeta(meta)
	row.Meta = s
	return err
}

// knowledgeMissed says a stored reply followed searches that found nothing.
func knowledgeMissed(m *store.Message) bool {
	return m.Kind == string(agent.KindAssistant) && strings.Contains(m.Meta, `"knowledge_miss":true`)
}
