// Package agent runs the loop every dialog of every tenant shares: resolve
// the provider, shape the context, stream the model's answer, record it, run
// its tool calls, repeat until the model answers without tools (or calls done
// in require_done_tool mode) or a limit stops the run. It knows nothing of
// databases or HTTP servers; the application injects the provider resolver,
// tools, hooks and an event sink.
//
// The platform runs it per HTTP request:
//
//	a, err := agent.New(agent.Config{Resolver: r, Tools: set, System: prompt,
//		Limits: agent.Limits{MaxTurns: 8}, Hooks: hooks, Sink: sse})
//	out, err := a.Send(ctx, state, userText)       // a new user message
//	out, err = a.SubmitToolResults(ctx, state, rs)  // after client_tool_request
//	out, err = a.Confirm(ctx, state, id, true)      // after confirmation_request
//
// State is plain JSON (messages, counters, usage, pending calls, loop
// memory), so a paused run resumes in another request or on another server.
// Every message is handed to Hooks.OnMessage as it is appended; events
// (turn_start, text_delta, tool_call, ..., done) go to the Sink with the JSON
// docs/events.md lists. Every run ends with exactly one done event.
//
// Steer and FollowUp may be called from other goroutines while a run goes:
// steering input is taken between tool calls (the calls not yet started get
// a "not run" result and a steering event lists them), follow-ups when the
// run would end. Limits (Limits) and tools asking to stop (tool.Result.Stop)
// end a run with their stop reason; with TerminationSummary a run cut short
// by a limit ends with one more model call, without tools, whose text is the
// final answer. Hooks document how each one's failure ends a run.
//
// Context management happens before each model call and never edits the
// stored messages: app-only kinds are left out, tool results were truncated
// when recorded, outputs of ephemeral tools beyond their last N are replaced
// by a placeholder, and near the model's context window the older messages
// are summarised into a summary message that stands in for them, cut so that
// a tool call and its results are never separated.
//
// Skills (Config.Skills) keep tools out of the model's offer until it loads
// the skill that names them with the built-in load_skill tool; the loaded
// skills are in State.Skills, so they stay loaded across runs. A tool that
// implements tool.CallIDTaker gets its call's id in its context
// (tool.CallID); the platform's agent tools link their sub-runs to it.
package agent
