package agent

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// Config is everything one run of the loop needs besides its State. The
// platform builds one per request (its hooks and sink are the request's);
// building is cheap next to a model call.
type Config struct {
	// Resolver chooses the provider and model for every model call. Required.
	Resolver ProviderResolver
	// Tools the model may call; nil means none.
	Tools *tool.Set
	// System is the system prompt.
	System      string
	Temperature *float64
	MaxTokens   int
	// ParallelToolCalls runs the calls of one answer concurrently (results
	// are still recorded in call order) and tells the model it may make several.
	ParallelToolCalls bool
	// ToolChoice is "" or "auto" (the model decides), "none", "required"
	// (some tool), or a tool's name. A choice that forces a call applies to
	// the first model call of a run only, so the model can still answer
	// once the tool has run.
	ToolChoice string
	// ThinkingBudget, when positive, turns on extended thinking with this
	// many tokens on providers that have it; thinking is kept in the
	// history and streamed as thinking_delta events.
	ThinkingBudget int
	// RequireDoneTool adds a "done" tool and keeps the run going until the
	// model calls it; a text answer without tools gets a nudge.
	RequireDoneTool bool
	// StrictTools offers every tool in the provider's strict mode, its
	// schema prepared by llm.StrictSchema (a tool whose schema cannot be is
	// offered as is); null members of the model's arguments then mean
	// "left out" and are dropped before validation.
	StrictTools bool
	// TerminationSummary asks the model for a short closing answer, without
	// tools, when a limit cuts the run short; its text becomes the final text.
	TerminationSummary bool
	// Skills are loaded by the model with the load_skill tool; the tools
	// they name are offered only once one of them is loaded.
	Skills  []Skill
	Limits  Limits
	Context ContextPolicy
	Hooks   Hooks
	// Guard screens the user's text and the model's final answers; nil
	// screens nothing.
	Guard Guard
	// Sink receives the run's events; nil discards them.
	Sink Sink
	// Now is the clock for message times; nil means time.Now.
	Now func() time.Time
}

// Limits bound one run (one user message and everything it causes). Zero
// values take the defaults noted.
type Limits struct {
	MaxTurns    int           // model calls per run; default 10
	TokenBudget int           // input+output tokens per run; 0 means none
	Timeout     time.Duration // wall-clock time per Send or resume; 0 means none
	ToolTimeout time.Duration // per tool call; default 60s
	// MaxConsecutiveErrors stops the run after this many turns in a row whose
	// tool calls all failed; default 3.
	MaxConsecutiveErrors int
	// LoopRepeats is how many identical tool-call batches in a row count as a
	// loop (default 3); two alternating batches count after two rounds (A B A B).
	LoopRepeats int
}

// ContextPolicy shapes what the model sees of the dialog. Zero values take
// the defaults noted.
type ContextPolicy struct {
	// MaxToolResultChars truncates longer tool results (marked); default 16000.
	MaxToolResultChars int
	// CompactAt is the share of the context window at which older messages
	// are summarised; default 0.8.
	CompactAt float64
	// KeepRecent is how many recent messages compaction keeps verbatim
	// (more when needed to keep a tool call with its results); default 6.
	KeepRecent int
	// CompactionPrompt asks the model for the summary; empty uses the
	// built-in one.
	CompactionPrompt string
	// NoCompaction turns compaction off: a dialog that outgrows the window
	// then fails with the provider's context-length error.
	NoCompaction bool
}

// Agent runs the loop for one request. Its methods must not be called
// concurrently with each other, except Steer and FollowUp, which may be called
// from any goroutine while a run is going.
type Agent struct {
	cfg Config
	// defs are the tools offered from the start of a run: with skills, the
	// open tools and load_skill.
	defs     []llm.ToolDefinition
	skills   *skillBook
	keepLast map[string]int
	// callIDs says a tool wants its call's id in its context
	// (tool.CallIDTaker); otherwise no call pays for passing it.
	callIDs bool
	sink    Sink
	// fixedChars is the size of what every request carries besides messages.
	fixedChars int

	mu       sync.Mutex
	steering []string
	followUp []string
}

// New checks cfg, applies defaults and converts the tool definitions once.
func New(cfg Config) (*Agent, error) {
	if cfg.Resolver == nil {
		return nil, errors.New("agent: Config.Resolver is required")
	}
	applyDefaults(&cfg)
	a := &Agent{cfg: cfg, sink: cfg.Sink, keepLast: map[string]int{}}
	if a.sink == nil {
		a.sink = discard{}
	}
	if cfg.Tools != nil {
		for _, d := range cfg.Tools.Definitions() {
			if cfg.RequireDoneTool && d.Name == doneToolName {
				return nil, fmt.Errorf("agent: tool %q clashes with the done tool of require_done_tool", d.Name)
			}
			def := llm.ToolDefinition{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
			if cfg.StrictTools {
				if params, err := llm.StrictSchema(d.Parameters); err == nil {
					def.Parameters, def.Strict = params, true
				}
			}
			a.defs = append(a.defs, def)
			t, _ := cfg.Tools.Lookup(d.Name)
			if e, ok := t.(tool.Ephemeral); ok && e.KeepLast() > 0 {
				a.keepLast[d.Name] = e.KeepLast()
			}
			if c, ok := t.(tool.CallIDTaker); ok && c.TakesCallID() {
				a.callIDs = true
			}
		}
	}
	if len(cfg.Skills) > 0 {
		if cfg.Tools != nil && hasTool(cfg.Tools, LoadSkillTool) {
			return nil, fmt.Errorf("agent: tool %q clashes with the skills' %s tool", LoadSkillTool, LoadSkillTool)
		}
		a.skills, a.defs = newSkillBook(cfg.Skills, a.defs)
	}
	if cfg.RequireDoneTool {
		a.defs = append(a.defs, doneDefinition)
	}
	a.fixedChars = len(cfg.System)
	for _, d := range a.defs {
		a.fixedChars += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	if a.skills != nil {
		for _, d := range a.skills.gated { // offered once loaded: count them from the start
			a.fixedChars += len(d.Name) + len(d.Description) + len(d.Parameters)
		}
	}
	return a, nil
}

func hasTool(set *tool.Set, name string) bool {
	_, ok := set.Lookup(name)
	return ok
}

func applyDefaults(cfg *Config) {
	if cfg.Limits.MaxTurns <= 0 {
		cfg.Limits.MaxTurns = 10
	}
	if cfg.Limits.ToolTimeout <= 0 {
		cfg.Limits.ToolTimeout = 60 * time.Second
	}
	if cfg.Limits.MaxConsecutiveErrors <= 0 {
		cfg.Limits.MaxConsecutiveErrors = 3
	}
	if cfg.Limits.LoopRepeats <= 1 {
		cfg.Limits.LoopRepeats = 3
	}
	if cfg.Context.MaxToolResultChars <= 0 {
		cfg.Context.MaxToolResultChars = 16000
	}
	if cfg.Context.CompactAt <= 0 || cfg.Context.CompactAt > 1 {
		cfg.Context.CompactAt = 0.8
	}
	if cfg.Context.KeepRecent <= 0 {
		cfg.Context.KeepRecent = 6
	}
	if cfg.Context.CompactionPrompt == "" {
		cfg.Context.CompactionPrompt = compactionPrompt
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
}

// Steer queues user input for the running run: it is taken between tool
// calls, the calls not yet started are skipped, and the model answers the new
// input next. With no run going it waits for the next one.
func (a *Agent) Steer(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.steering = append(a.steering, text)
}

// FollowUp queues user input for when the run would end: it is appended then
// and the run goes on to answer it.
func (a *Agent) FollowUp(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.followUp = append(a.followUp, text)
}

func (a *Agent) drainSteering() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.steering
	a.steering = nil
	return out
}

func (a *Agent) steeringWaiting() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.steering) > 0
}

func (a *Agent) drainFollowUp() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.followUp
	a.followUp = nil
	return out
}
