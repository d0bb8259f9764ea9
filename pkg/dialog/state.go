package dialog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
)

// messageMeta is what a stored message keeps of the loop's message besides
// its blocks.
type messageMeta struct {
	Tool   *agent.ToolInfo `json:"tool,omitempty"`
	Covers int             `json:"covers,omitempty"`
	Origin string          `json:"origin,omitempty"`
	// Author names the person who wrote an operator message.
	Author string `json:"author,omitempty"`
	// Citations are the knowledge passages an assistant message cites.
	Citations []cite.Citation `json:"citations,omitempty"`
	// KnowledgeMiss says the searches before this reply found nothing
	// good enough: its question counts as unanswered.
	KnowledgeMiss bool `json:"knowledge_miss,omitempty"`
}

// emptyMeta is the meta of most messages (a user's text, a plain reply):
// every turn converts its whole history, so the JSON round trip is skipped
// for it.
const emptyMeta = "{}"

func marshalMeta(meta messageMeta) (string, error) {
	if meta.Tool == nil && meta.Covers == 0 && meta.Origin == "" && meta.Author == "" && len(meta.Citations) == 0 && !meta.KnowledgeMiss {
		return emptyMeta, nil
	}
	b, err := json.Marshal(meta)
	return string(b), err
}

// storeMessage converts a loop message into a row of dialog d.
func storeMessage(d *store.Dialog, m agent.Message, citations ...cite.Citation) (*store.Message, error) {
	content, err := json.Marshal(m.Content)
	if err != nil {
		return nil, fmt.Errorf("message content: %w", err)
	}
	meta, err := marshalMeta(messageMeta{Tool: m.Tool, Covers: m.Covers, Origin: m.Origin, Author: m.Author, Citations: citations})
	if err != nil {
		return nil, fmt.Errorf("message meta: %w", err)
	}
	row := &store.Message{TenantID: d.TenantID, DialogID: d.ID, Kind: string(m.Kind), Role: string(m.Role),
		Content: string(content), Text: messageText(m), Model: m.Model, Provider: m.Provider, Status: store.MessageComplete,
		Turn: m.Turn, Meta: meta, InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
		CreatedAt: m.Time.UTC()}
	if m.Kind == agent.KindAssistant || m.Kind == agent.KindSummary {
		row.BotVersion = d.VersionNumber
	}
	return row, nil
}

// messageText is a message's text for lists: a tool result's content
// when it has no text block.
func messageText(m agent.Message) string {
	if t := m.Text(); t != "" {
		return t
	}
	if r := m.ToolResult(); r != nil {
		return r.Content
	}
	return ""
}

// agentMessage converts a stored row back into the loop's message.
func agentMessage(m *store.Message) (agent.Message, error) {
	var blocks []llm.Block
	if err := json.Unmarshal([]byte(m.Content), &blocks); err != nil {
		return agent.Message{}, fmt.Errorf("message %s: content: %w", m.ID, err)
	}
	var meta messageMeta
	if m.Meta != emptyMeta {
		if err := json.Unmarshal([]byte(m.Meta), &meta); err != nil {
			return agent.Message{}, fmt.Errorf("message %s: meta: %w", m.ID, err)
		}
	}
	return agent.Message{Kind: agent.Kind(m.Kind), Message: llm.Message{Role: llm.Role(m.Role), Content: blocks},
		Model: m.Model, Provider: m.Provider, Turn: m.Turn,
		Usage: llm.Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens},
		Tool:  meta.Tool, Covers: meta.Covers, Origin: meta.Origin, Author: meta.Author, Time: m.CreatedAt}, nil
}

// savedState is what a dialog row keeps between requests: the loop state
// without its messages (they are rows of their own) and the notes of the
// remember and recall tools.
type savedState struct {
	agent.State
	Memory map[string]string `json:"memory,omitempty"`
}

// loadState reads the dialog's saved state, without messages.
func loadState(d *store.Dialog) (savedState, error) {
	var st savedState
	if d.State == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(d.State), &st); err != nil {
		return st, fmt.Errorf("dialog %s: state: %w", d.ID, err)
	}
	return st, nil
}

// state is the saved state of dialog d with the complete messages in
// order. Interrupted replies are left out: the model never saw them, so a
// summary's Covers index counts exactly the rows kept. Call it holding the
// dialog's lease, before the run stores its own text: any text still
// queued then was queued for a run that died before taking it, and no one
// else will; in an active dialog it joins the conversation where it was
// sent (a paused one waits for tool results, which no user text may
// precede, so there it stays queued). first, the run's own text stored
// with its lease, is left out: the loop adds it. clean says no other row
// is left queued, so the messages are all the dialog's rows up to its
// last_seq but first.
func (r *Runtime) state(ctx context.Context, d *store.Dialog, first *store.Message) (st savedState, clean bool, err error) {
	if st, err = loadState(d); err != nil {
		return st, false, err
	}
	before := d.LastSeq // the last_seq the history ends at
	if first != nil {
		before = first.Seq - 1 // first took the next seq, in one statement with the lease
	}
	if before == 0 {
		return st, true, nil // a new dialog: seqs start at 1, so it has no rows yet
	}
	if msgs, ok := r.history.take(d.TenantID, d.ID, before); ok {
		st.Messages = msgs
		return st, true, nil
	}
	rows, err := r.store.Tenant(d.TenantID).Messages().List(ctx, d.ID, 0)
	if err != nil {
		return st, false, err
	}
	clean = true
	st.Messages = make([]agent.Message, 0, len(rows))
	for i := range rows {
		if first != nil && rows[i].ID == first.ID {
			continue
		}
		if rows[i].Status == store.MessageQueued && d.Status == DialogActive {
			if err := r.adoptOrphan(ctx, &rows[i]); err != nil {
				return st, false, err
			}
		}
		if rows[i].Status == store.MessageQueued {
			clean = false
		}
		if rows[i].Status != store.MessageComplete {
			continue
		}
		m, err := agentMessage(&rows[i])
		if err != nil {
			return st, false, err
		}
		st.Messages = append(st.Messages, m)
	}
	return st, clean, nil
}

// adoptOrphan marks complete, in place, a text whose run died with it
// still queued (a crash, a lost lease, a shutdown), so the user's message
// is part of the conversation the next reply answers.
func (r *Runtime) adoptOrphan(ctx context.Context, m *store.Message) error {
	m.Status = store.MessageComplete
	return r.store.Tenant(m.TenantID).Messages().Update(ctx, m.ID, completeUpdate(m))
}
