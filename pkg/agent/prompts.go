package agent

import "fmt"

// The texts the loop itself puts in front of the model.
const (
	doneNudge = "You have not called the done tool yet. Continue with the task; " +
		"when it is complete, call done with your final answer for the user."
	compactionPrompt = "Summarise the conversation so far for yourself, to continue it " +
		"without the full history: the user's goals, facts learned (including tool results " +
		"that still matter), decisions made, and what is still open. Be concise and do not call tools."
	summaryPreamble      = "Summary of the earlier conversation:\n\n"
	ephemeralPlaceholder = "[output removed to save context; call the tool again if you need it]"

	skippedSteered     = "Not run: the user sent a new message before this call started."
	skippedMovedOn     = "Not run: the user sent a new message instead of answering this request."
	skippedInterrupted = "Not run: the previous reply was interrupted."
	skippedStopped     = "Not run: the conversation was stopped."
	skippedLoop        = "Not run: the same tool calls were repeated without progress."
	declined           = "The user declined this tool call. Do not retry it; ask what they would like instead."
)

// terminationPrompt asks for a closing answer when a limit cut the run short.
func terminationPrompt(reason StopReason) string {
	return fmt.Sprintf("The conversation turn was stopped (%s) before the task was finished. "+
		"Without calling tools, tell the user briefly what was done, what is still open, "+
		"and what they can do next.", reason)
}

// operatorNote is how the model sees what a person told the user while
// the dialog was handed off: on the user's side, plainly marked as the
// operator's words, so it never takes them for its own and picks up
// where the person left off.
func operatorNote(author, text string) string {
	if author == "" {
		author = "a human operator"
	}
	return fmt.Sprintf("[While the conversation was handed to a person, %s (a human operator) told the user:]\n%s", author, text)
}
