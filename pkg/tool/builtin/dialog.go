package builtin

import (
	"context"

	"github.com/parleyhq/parley/pkg/tool"
)

// Stop reasons native tools ask the loop for.
const (
	StopHandoff   = "handoff"
	StopCompleted = "completed"
)

type handoffArgs struct {
	Reason  string `json:"reason" jsonschema:"why a human should take over, in one sentence"`
	Summary string `json:"summary,omitempty" jsonschema:"what the human agent needs to know: the customer's request and what was tried"`
}

func handoffToHuman() Native {
	return define("handoff_to_human",
		"Hand the conversation to a human agent. Use it when the customer asks for a person, when you cannot help, or when the situation is sensitive. The bot stops answering in this dialog afterwards.",
		func(ctx context.Context, env Env, args handoffArgs) (tool.Result, error) {
			return tool.Result{
				Content: "The conversation was handed to a human agent. Tell the customer a person will follow up, and do not call further tools.",
				Stop:    StopHandoff,
			}, nil
		})
}

type endDialogArgs struct {
	Reason string `json:"reason,omitempty" jsonschema:"why the conversation is over"`
}

func endDialog() Native {
	return define("end_dialog",
		"End the conversation when the customer's request is fully resolved and they have nothing else to ask.",
		func(ctx context.Context, env Env, args endDialogArgs) (tool.Result, error) {
			if env.EndDialog != nil {
				env.EndDialog(args.Reason)
			}
			return tool.Result{Content: "The conversation is closed.", Stop: StopCompleted}, nil
		})
}

type cannotAnswerArgs struct {
	Reason string `json:"reason" jsonschema:"why you cannot answer, in one sentence"`
}

// cannotAnswer lets the model say it could not help, so the platform
// counts the question as unanswered (docs/insights.md) from the model's
// own signal instead of guessing from its words.
func cannotAnswer() Native {
	return define("cannot_answer",
		"Call this when you cannot answer the customer's question: you lack the information or it is outside what you can do. Then tell the customer so in your reply.",
		func(ctx context.Context, env Env, args cannotAnswerArgs) (tool.Result, error) {
			return tool.Result{Content: "Noted. Tell the customer you cannot help with this, and offer what you can."}, nil
		})
}
