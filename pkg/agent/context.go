package agent

import (
	"github.com/parleyhq/parley/pkg/llm"
)

// view is what the model sees of the dialog, kept up to date message by
// message so a turn costs the new messages, not the whole history: app-only
// kinds are left out, a summary stands in for the messages it covers, and
// the outputs of ephemeral tools beyond their last N are replaced by a
// placeholder. It is rebuilt only when a run starts and after a compaction.
type view struct {
	msgs []llm.Message
	// src[i] is the index in State.Messages that msgs[i] comes from.
	src []int
	// chars is the size of msgs, for the token estimate.
	chars int
	// shown lists, per ephemeral tool, the positions of its outputs still shown.
	shown map[string][]int
	// reported is the provider's token count for the view as it was when
	// chars was reportedAt; 0 until a call reports usage.
	reported, reportedAt int
}

func (v *view) build(a *Agent, st *State) {
	if need := len(st.Messages) + 8; cap(v.msgs) < need {
		// One allocation for the run: turns then append into the spare room.
		v.msgs, v.src = make([]llm.Message, 0, need), make([]int, 0, need)
	}
	v.msgs, v.src, v.chars, v.reported = v.msgs[:0], v.src[:0], 0, 0
	clear(v.shown)
	start := 0
	if i := lastSummary(st.Messages); i >= 0 {
		s := &st.Messages[i]
		v.push(llm.UserText(summaryPreamble+s.Text()), i)
		start = s.Covers
	}
	for i := start; i < len(st.Messages); i++ {
		if st.Messages[i].Kind != KindSummary {
			v.add(a, st.Messages, i)
		}
	}
}

func lastSummary(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Kind == KindSummary {
			return i
		}
	}
	return -1
}

// add shows msgs[i] to the model if its kind is sent.
func (v *view) add(a *Agent, msgs []Message, i int) {
	m := &msgs[i]
	if !m.Kind.Sent() || m.Kind == KindSummary {
		return
	}
	if m.Kind == KindAssistant && len(m.Content) == 0 {
		// An empty answer would make the API refuse every later request.
		return
	}
	if m.Kind == KindOperator {
		v.push(llm.UserText(operatorNote(m.Author, m.Text())), i)
		return
	}
	v.push(m.Message, i)
	if r := m.Message.ToolResult(); r != nil {
		if n := a.keepLast[r.Name]; n > 0 {
			v.keepLatest(r.Name, n)
		}
	}
}

func (v *view) push(m llm.Message, src int) {
	v.msgs = append(v.msgs, m)
	v.src = append(v.src, src)
	v.chars += size(m)
}

// keepLatest replaces all but the latest n outputs of an ephemeral tool.
// The replaced entry is a new message value, never an edit of the stored
// one, so the State keeps the full output.
func (v *view) keepLatest(name string, n int) {
	if v.shown == nil {
		v.shown = map[string][]int{}
	}
	shown := append(v.shown[name], len(v.msgs)-1)
	for len(shown) > n {
		i := shown[0]
		shown = shown[1:]
		old := v.msgs[i].ToolResult()
		v.chars -= size(v.msgs[i])
		v.msgs[i] = llm.ToolResultMessage(llm.ToolResult{ToolUseID: old.ToolUseID, Name: old.Name, Content: ephemeralPlaceholder})
		v.chars += size(v.msgs[i])
	}
	v.shown[name] = shown
}

// tokens estimates the tokens of a request made from the view: about four
// characters a token, or, when larger, the provider's last count plus the
// estimate of what was added since. The count keeps CJK text, which runs
// nearer one character a token, from slipping past compaction.
func (v *view) tokens(a *Agent) int {
	est := (v.chars + a.fixedChars) / 4
	if v.reported > 0 {
		est = max(est, v.reported+(v.chars-v.reportedAt)/4)
	}
	return est
}

// report records a provider's usage for the view it was just sent, the
// answer included.
func (v *view) report(u llm.Usage) {
	if u.InputTokens > 0 {
		v.reported, v.reportedAt = u.Total(), v.chars
	}
}

// size is a message's length in bytes of text, arguments and results.
func size(m llm.Message) int {
	n := 8
	for _, b := range m.Content {
		n += len(b.Text)
		if b.ToolUse != nil {
			n += len(b.ToolUse.Name) + len(b.ToolUse.Arguments)
		}
		if b.ToolResult != nil {
			n += len(b.ToolResult.Content)
		}
		if b.Image != nil {
			n += imageChars
		}
	}
	return n
}

// imageChars is what an image counts for in the estimate: providers bill
// an image by its pixels, about 1,600 tokens for a large one, not by the
// bytes of its file.
const imageChars = 4 * 1600
