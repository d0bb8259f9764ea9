package agent

import (
	"errors"
	"fmt"

	"github.com/parleyhq/parley/pkg/llm"
)

// fit compacts the view when its estimate nears the model's context window.
// A failed compaction is reported to OnError and the call goes ahead: the
// provider may still accept the request, and if not its context_length error
// says so plainly.
func (r *run) fit(c Choice) error {
	if c.ContextWindow <= 0 || r.a.cfg.Context.NoCompaction {
		return nil
	}
	if float64(r.view.tokens(r.a)) < r.a.cfg.Context.CompactAt*float64(c.ContextWindow) {
		return nil
	}
	err := r.compact(c)
	var he *HookError
	if errors.As(err, &he) {
		return err
	}
	if err != nil {
		r.notify(fmt.Errorf("agent: compaction: %w", err))
	}
	return nil
}

// compact asks the model to summarise all but the recent tail of the view and
// appends a summary message that stands in for the older messages from then
// on. The tail never starts with a tool result, so a tool call and its
// results stay together on one side of the cut.
func (r *run) compact(c Choice) error {
	v := &r.view
	keep := len(v.msgs) - r.a.cfg.Context.KeepRecent
	for keep > 0 && v.msgs[keep].Role == llm.RoleTool {
		keep--
	}
	if keep < 2 {
		return nil // nothing worth summarising; the tail is all there is
	}
	covers := v.src[keep]
	msgs := append(v.msgs[:keep:keep], llm.UserText(r.a.cfg.Context.CompactionPrompt))
	r.prepare(c, msgs, false)
	resp, err := c.Provider.Complete(r.ctx, &r.req)
	if err != nil {
		return err
	}
	r.count(resp.Usage)
	if _, err := r.meter(TurnInfo{Turn: r.st.Turns + 1, Purpose: PurposeCompaction, Model: c.Model,
		Provider: c.Provider.Name(), Usage: resp.Usage}); err != nil {
		return err
	}
	text := resp.Message.Text()
	if text == "" {
		return errors.New("the model returned an empty summary")
	}
	return r.add(Message{Kind: KindSummary, Message: llm.UserText(text), Model: c.Model,
		Provider: c.Provider.Name(), Turn: r.st.Turns + 1, Usage: resp.Usage, Covers: covers, Origin: OriginLoop})
}
