package agent

import (
	"encoding/json"

	"github.com/parleyhq/parley/pkg/llm"
)

// doneToolName is the tool the model calls to finish in require_done_tool
// mode. A plain text answer is not enough there: models tend to stop early
// and narrate instead of acting.
const doneToolName = "done"

var doneDefinition = llm.ToolDefinition{
	Name:        doneToolName,
	Description: "Call this when the task is complete, with your final answer for the user.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"message":` +
		`{"type":"string","description":"The final answer for the user"}},"required":["message"]}`),
}

// doneMessage returns the message argument of a done call, "" when missing.
func doneMessage(args json.RawMessage) string {
	var a struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return ""
	}
	return a.Message
}
