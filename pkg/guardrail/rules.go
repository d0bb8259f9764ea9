package guardrail

// Rules, as the guardrail stream event and the metrics name them.
const (
	RuleBlockedTopic    = "blocked_topic"    // a blocked_topics phrase in the text
	RuleMaxLength       = "max_length"       // a user message over max_message_chars
	RuleModeration      = "moderation"       // the moderation provider flagged the text
	RulePromptInjection = "prompt_injection" // a tool output that reads like instructions
)

// Rules lists every rule, for metrics labels.
var Rules = []string{RuleBlockedTopic, RuleMaxLength, RuleModeration, RulePromptInjection}

// Where a rule fired.
const (
	WhereInput  = "input"       // the user's message
	WhereOutput = "output"      // the model's answer
	WhereTool   = "tool_output" // a tool's result
)

// Actions a bot may take when a rule fires on the input or the output.
const (
	ActionRefuse  = "refuse"  // answer with the configured reply
	ActionHandoff = "handoff" // hand the dialog to a human
	ActionEnd     = "end"     // answer with the reply and close the dialog
)
