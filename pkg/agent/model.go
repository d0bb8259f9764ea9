package agent

import (
	"errors"
	"fmt"

	"github.com/parleyhq/parley/pkg/llm"
)

// callModel resolves the provider and streams one answer, falling over to
// the resolver's next choice after a retryable failure.
func (r *run) callModel(turn int) (*llm.Response, Choice, error) {
	var failed error
	for attempt := 0; ; attempt++ {
		choice, err := r.resolve(turn, attempt, failed)
		if err != nil {
			return nil, Choice{}, err
		}
		if err := r.switchTo(choice); err != nil {
			return nil, Choice{}, err
		}
		if attempt == 0 {
			r.inTurn = turn
			r.a.sink.Send(TurnStart{Turn: turn, Model: choice.Model, Provider: choice.Provider.Name()})
		}
		if err := r.fit(choice); err != nil {
			return nil, Choice{}, err
		}
		if attempt == 0 {
			if err := r.beforeCall(choice); err != nil {
				return nil, choice, err
			}
		}
		r.prepare(choice, r.view.msgs, true)
		if r.extra != "" {
			r.req.System += "\n\n" + r.extra
		}
		resp, err := choice.Provider.Stream(r.ctx, &r.req, r.onDelta)
		if err == nil {
			return resp, choice, nil
		}
		retryable, _ := llm.IsRetryable(err)
		if !retryable || r.ctx.Err() != nil || attempt+1 >= maxAttempts {
			return nil, choice, err
		}
		failed = err
	}
}

// beforeCall asks the BeforeModelCall hook what to add to the turn's
// system prompt.
func (r *run) beforeCall(c Choice) error {
	r.extra = ""
	hook := r.a.cfg.Hooks.BeforeModelCall
	if hook == nil {
		return nil
	}
	extra, err := hook(r.parent, r.view.msgs, c.ContextWindow)
	if err != nil {
		return &HookError{Hook: "BeforeModelCall", Err: err}
	}
	r.extra = extra
	return nil
}

// resolve asks the resolver for a choice. When it has nothing left after a
// failure, the failure is what the caller needs to hear about.
func (r *run) resolve(turn, attempt int, failed error) (Choice, error) {
	choice, err := r.a.cfg.Resolver.Resolve(r.ctx, ResolveInfo{Turn: turn, Attempt: attempt, Failed: failed})
	switch {
	case err != nil && failed != nil:
		return Choice{}, failed
	case err != nil:
		return Choice{}, &ResolveError{Err: err}
	case choice.Provider == nil || choice.Model == "":
		return Choice{}, &ResolveError{Err: errors.New("resolver returned no provider or model")}
	}
	return choice, nil
}

// switchTo records the provider and model in use, telling the client and the
// dialog view when they change.
func (r *run) switchTo(c Choice) error {
	name := c.Provider.Name()
	if r.st.Model == c.Model && r.st.Provider == name {
		return nil
	}
	from := r.st.Provider + "/" + r.st.Model
	r.st.Model, r.st.Provider = c.Model, name
	if from == "/" {
		return nil
	}
	to := c.label()
	r.a.sink.Send(ProviderSwitch{From: from, To: to})
	note := fmt.Sprintf("switched from %s to %s", from, to)
	return r.add(Message{Kind: KindSystemEvent, Message: llm.UserText(note), Origin: OriginLoop, Turn: r.st.Turns + 1})
}

// prepare fills the run's reusable request; tools are left out of calls that
// must be answered in text (compaction, termination summary).
func (r *run) prepare(c Choice, msgs []llm.Message, withTools bool) {
	cfg := &r.a.cfg
	r.req = llm.Request{Model: c.Model, System: cfg.System, Messages: msgs,
		Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens, ThinkingBudget: cfg.ThinkingBudget}
	if withTools && len(r.tools) > 0 {
		r.req.Tools = r.tools
		r.req.ParallelToolCalls = &r.a.cfg.ParallelToolCalls
		r.req.ToolChoice = r.toolChoice()
	}
}

// toolChoice is the configured choice; one that forces a tool call holds
// for the run's first model call only, or the model could never answer.
func (r *run) toolChoice() string {
	switch c := r.a.cfg.ToolChoice; {
	case c == "" || c == "auto" || c == "none":
		return c
	case r.st.Turns == 0:
		return c
	default:
		return ""
	}
}

// summarise makes the termination summary: one more call, without tools,
// asking the model to tell the user where things stand.
func (r *run) summarise(reason StopReason) (string, error) {
	choice, err := r.resolve(r.st.Turns, 0, nil)
	if err != nil {
		return "", err
	}
	msgs := append(r.view.msgs[:len(r.view.msgs):len(r.view.msgs)], llm.UserText(terminationPrompt(reason)))
	r.prepare(choice, msgs, false)
	resp, err := choice.Provider.Stream(r.ctx, &r.req, r.onDelta)
	if err != nil {
		return "", err
	}
	r.count(resp.Usage)
	if _, err := r.meter(TurnInfo{Turn: r.st.Turns, Purpose: PurposeSummary, Model: choice.Model,
		Provider: choice.Provider.Name(), Usage: resp.Usage}); err != nil {
		return "", err
	}
	text := resp.Message.Text()
	if text == "" {
		return "", nil
	}
	m := Message{Kind: KindAssistant, Message: llm.AssistantText(text), Model: choice.Model,
		Provider: choice.Provider.Name(), Turn: r.st.Turns, Usage: resp.Usage, Origin: OriginLoop}
	return text, r.add(m)
}
