package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// Headers of the turn routes.
const (
	headerIdempotencyKey = "Idempotency-Key"
	// headerReplayed marks a response replayed for an Idempotency-Key.
	headerReplayed = "Idempotent-Replayed"
)

// runTurn runs one request's turn, sending events to sink (nil for JSON).
// messageID is the id a new user text is stored under, named by the
// request's Idempotency-Key claim ("" without one).
type runTurn func(ctx context.Context, sink agent.Sink, messageID string) (dialog.Turn, error)

// messagesRoute is postMessage's route, which bounds its own body
// (dialogAPI.maxMessageBody) to make room for images.
const messagesRoute = "/v1/tenants/:tenant/dialogs/:dialog/messages"

// postMessage: POST /v1/tenants/{tenant}/dialogs/{dialog}/messages {text, images?}.
func (d *dialogAPI) postMessage(c *gin.Context) {
	d.turn(c, func(body []byte) (runTurn, error) {
		var req apiclient.SendMessageRequest
		if err := decodeBytes(body, &req); err != nil {
			return nil, err
		}
		return func(ctx context.Context, sink agent.Sink, messageID string) (dialog.Turn, error) {
			in := dialog.SendInput{Text: req.Text, Origin: browserOrigin(c.Request), MessageID: messageID, Images: mapAll(req.Images, imageIn)}
			return d.rt.SendMessage(ctx, principal(c), c.Param("tenant"), c.Param("dialog"), in, sink)
		}, nil
	})
}

func imageIn(i apiclient.ImageInput) dialog.ImageInput {
	return dialog.ImageInput{Data: i.Data, URL: i.URL}
}

// postToolResults: POST .../dialogs/{dialog}/tool-results {results}.
func (d *dialogAPI) postToolResults(c *gin.Context) {
	d.turn(c, func(body []byte) (runTurn, error) {
		var req apiclient.ToolResultsRequest
		if err := decodeBytes(body, &req); err != nil {
			return nil, err
		}
		results := make([]agent.ClientResult, len(req.Results))
		for i, r := range req.Results {
			results[i] = agent.ClientResult{ID: r.ID, Content: r.Content, IsError: r.IsError}
		}
		return func(ctx context.Context, sink agent.Sink, _ string) (dialog.Turn, error) {
			in := dialog.ToolResultsInput{Results: results, Origin: browserOrigin(c.Request)}
			return d.rt.SubmitToolResults(ctx, principal(c), c.Param("tenant"), c.Param("dialog"), in, sink)
		}, nil
	})
}

// postConfirmation: POST .../dialogs/{dialog}/confirmations {id, approved}.
func (d *dialogAPI) postConfirmation(c *gin.Context) {
	d.turn(c, func(body []byte) (runTurn, error) {
		var req apiclient.ConfirmationRequest
		if err := decodeBytes(body, &req); err != nil {
			return nil, err
		}
		if req.Approved == nil {
			return nil, invalid("/approved", "is required: true runs the call, false declines it")
		}
		return func(ctx context.Context, sink agent.Sink, _ string) (dialog.Turn, error) {
			return d.rt.Confirm(ctx, principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request), req.ID, *req.Approved, sink)
		}, nil
	})
}

// turn is the shared shape of the routes that run the loop: read a bounded
// body, honour Idempotency-Key, then answer as JSON or as an event stream.
func (d *dialogAPI) turn(c *gin.Context, prepare func(body []byte) (runTurn, error)) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, d.maxMessageBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		d.fail(c, &apiclient.Error{Code: apiclient.CodeTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)})
		return
	}
	if err != nil {
		d.fail(c, badRequest("", "the request body could not be read"))
		return
	}
	run, err := prepare(body)
	if err != nil {
		d.fail(c, err)
		return
	}
	idem, replayed, err := d.claim(c, body)
	if err != nil {
		d.fail(c, err)
		return
	}
	if replayed {
		return
	}
	var out answer
	if wantsSSE(c.Request) {
		out = d.stream(c, run, idem.messageID())
	} else {
		out = d.json(c, run, idem.messageID())
	}
	idem.finish(out)
}

// answer is how a turn request was answered, for its Idempotency-Key:
// the response a retry replays (nil when the request was refused before
// it changed anything), unless retry says the server failed and told the
// client to send the request again. Such an answer is not the request's:
// the key stays open for that retry.
type answer struct {
	replay *dialog.Replay
	retry  bool
}

// serverFailed says whether a request that failed with status failed on
// the server's side, in a way that sending it again may mend (retryable):
// a reply cut by the server's shutdown, a database away for a moment.
func serverFailed(status int, retryable bool) bool {
	return status >= http.StatusInternalServerError && retryable
}

// stream answers with an event stream; it says what to replay, nothing
// when the request failed before anything happened.
func (d *dialogAPI) stream(c *gin.Context, run runTurn, messageID string) answer {
	s := newSSE(c, d.ping, d.streams)
	if c.GetHeader(headerIdempotencyKey) == "" {
		s.withoutRecording()
	}
	turn, err := run(c.Request.Context(), s, messageID)
	started, _ := s.recorded()
	retry := false
	switch {
	case err != nil && started:
		// The status is already 200: the failure travels as the last event.
		e := d.toAPIError(err)
		if e == errInternal {
			d.log.Error("request failed", "request_id", c.GetString(ctxRequestID), "route", routeLabel(c), "err", err)
		}
		s.Send(agent.Error{Code: e.Code, Message: e.Message})
		retry = serverFailed(statusOf[e.Code], true)
	case turn.Error != nil:
		retry = serverFailed(turnStatus(turn.Error.Code), turn.Error.Retryable)
	}
	s.close()
	if !started {
		// Refused before the run began, or the text joined another
		// request's run, whose stream carries the answer.
		return d.writeTurn(c, turn, err)
	}
	_, rec := s.recorded()
	return answer{replay: &dialog.Replay{Status: http.StatusOK, ContentType: "text/event-stream", Body: rec}, retry: retry}
}

// json answers with the turn's new messages and its done event; a text
// that joined a reply already being generated is 202 Accepted.
func (d *dialogAPI) json(c *gin.Context, run runTurn, messageID string) answer {
	turn, err := run(c.Request.Context(), nil, messageID)
	return d.writeTurn(c, turn, err)
}

func (d *dialogAPI) writeTurn(c *gin.Context, turn dialog.Turn, err error) answer {
	if err == nil {
		var body []byte
		if body, err = json.Marshal(turnOut(turn)); err == nil {
			return d.writeTurnBody(c, turn, body)
		}
	}
	d.fail(c, err)
	// An error answer is never replayed; one of the server's own (a 5xx)
	// may come after the text was stored, which the retry must answer.
	return answer{retry: serverFailed(c.Writer.Status(), true)}
}

func (d *dialogAPI) writeTurnBody(c *gin.Context, turn dialog.Turn, body []byte) answer {
	status, retryable := http.StatusOK, false
	switch {
	case turn.Queued:
		status = http.StatusAccepted
	case turn.Error != nil:
		status, retryable = turnStatus(turn.Error.Code), turn.Error.Retryable
		if turn.Error.Code == dialog.EventServerRestarting {
			c.Header("Retry-After", "1")
		}
	}
	c.Data(status, "application/json; charset=utf-8", body)
	replay := &dialog.Replay{Status: status, ContentType: "application/json; charset=utf-8", Body: string(body)}
	return answer{replay: replay, retry: serverFailed(status, retryable)}
}

// idempotency is a claimed Idempotency-Key, or none.
type idempotency struct {
	d   *dialogAPI
	c   *gin.Context
	key string
	// message is the id the request's text is stored under.
	message string
}

// messageID is the id the claim names for the request's text, "" for none.
func (i *idempotency) messageID() string {
	if i == nil {
		return ""
	}
	return i.message
}

// claim handles the Idempotency-Key header: a retry of a finished request
// gets its first response again (replayed true), a duplicate of one still
// running a conflict. The fingerprint covers the route, the response form
// and the body, so a key reused for another request is refused.
func (d *dialogAPI) claim(c *gin.Context, body []byte) (*idempotency, bool, error) {
	key := c.GetHeader(headerIdempotencyKey)
	if key == "" {
		return nil, false, nil
	}
	if !visibleASCII(key) || len(key) > 255 {
		return nil, false, invalid("/headers/Idempotency-Key", "must be 1-255 visible ASCII characters")
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s sse=%v\n", c.Request.Method, c.Request.URL.Path, wantsSSE(c.Request))
	h.Write(body)
	fp := hex.EncodeToString(h.Sum(nil))
	replay, messageID, err := d.rt.IdempotencyKeys().Claim(c.Request.Context(), principal(c), c.Param("tenant"), key, fp)
	if err != nil {
		return nil, false, err
	}
	if replay != nil {
		c.Header(headerReplayed, "true")
		c.Data(replay.Status, replay.ContentType, []byte(replay.Body))
		return nil, true, nil
	}
	return &idempotency{d: d, c: c, key: key, message: messageID}, false, nil
}

// finish stores the response to replay; or releases the key when the
// server failed and said to retry, so the retry runs under the same
// message id; or frees it when the request was refused before it changed
// anything, so a retry runs afresh.
func (i *idempotency) finish(out answer) {
	if i == nil {
		return
	}
	ctx := context.WithoutCancel(i.c.Request.Context())
	p, tenant, keys := principal(i.c), i.c.Param("tenant"), i.d.rt.IdempotencyKeys()
	var err error
	switch {
	case out.retry:
		err = keys.Release(ctx, p, tenant, i.key)
	case out.replay == nil:
		err = keys.Forget(ctx, p, tenant, i.key)
	default:
		err = keys.Complete(ctx, p, tenant, i.key, *out.replay)
	}
	if err != nil {
		i.d.log.Error("idempotency key not recorded", "request_id", i.c.GetString(ctxRequestID), "err", err)
	}
}
