package dialog

import "github.com/parleyhq/parley/pkg/agent"

// EventServerRestarting is the code of the error event that ends a run
// cut short because its server is shutting down (SIGTERM). The loop only
// sees its context canceled; said as is, that would read as the caller's
// own cancel. It is retryable: the same request answers once the server
// (or another instance) is back.
const EventServerRestarting = "server_restarting"

// restartingEvent is the error event of a run its server's shutdown cut.
func restartingEvent() agent.Error {
	return agent.Error{Code: EventServerRestarting, Retryable: true,
		Message: "the server is restarting; send the request again in a moment"}
}
