package agent

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/pkg/llm"
)

// Guard screens what is said in a run against the bot's guardrails. The
// application implements it (rules, moderation calls); the loop only asks
// it at two points: the user's text once stored, and the model's final
// answer before it is stored.
type Guard interface {
	// Screen checks text, said where ("input": the user's text; "output":
	// the model's answer without tool calls). A nil Verdict lets it pass;
	// an error stops the run with "error".
	Screen(ctx context.Context, where, text string) (*Verdict, error)
}

// Verdict is a rule that fired: the run stops with StopGuardrail.
type Verdict struct {
	Rule  string
	Where string
	// Reply, when set, is the bot's answer instead of the model's: stored
	// and returned as the run's text. Empty stores no answer (a handoff).
	Reply string
}

// Guardrail says a guardrail rule fired where; the run then stops with
// stop reason "guardrail".
type Guardrail struct {
	Rule  string `json:"rule"`
	Where string `json:"where"`
}

// Type is the event's "type" field.
func (Guardrail) Type() string { return "guardrail" }

// MarshalJSON writes the event with its type.
func (e Guardrail) MarshalJSON() ([]byte, error) {
	type plain Guardrail
	return withType(e.Type(), plain(e))
}

// screen asks the Guard, when there is one.
func (r *run) screen(where, text string) (*Verdict, error) {
	g := r.a.cfg.Guard
	if g == nil || text == "" {
		return nil, nil
	}
	v, err := g.Screen(r.ctx, where, text)
	if err != nil {
		return nil, fmt.Errorf("agent: guardrail: %w", err)
	}
	return v, nil
}

// guarded stops the run for a Verdict: the event, a note in the dialog
// saying which rule fired where, and the reply the Verdict gives.
func (r *run) guarded(v *Verdict) (Outcome, error) {
	r.a.sink.Send(Guardrail{Rule: v.Rule, Where: v.Where})
	note := Message{Kind: KindSystemEvent, Message: llm.UserText("guardrail " + v.Rule + " fired on the " + v.Where),
		Origin: OriginLoop, Turn: r.st.Turns}
	if err := r.add(note); err != nil {
		return r.fail(err)
	}
	if v.Reply != "" {
		reply := Message{Kind: KindAssistant, Message: llm.AssistantText(v.Reply), Origin: OriginLoop, Turn: r.st.Turns}
		if err := r.add(reply); err != nil {
			return r.fail(err)
		}
		r.finalText = v.Reply
	}
	return r.finish(StopGuardrail)
}

// Where a Guard screens.
const (
	WhereInput  = "input"
	WhereOutput = "output"
)
