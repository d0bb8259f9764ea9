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
	var resp *dialog.Replay
	if wantsSSE(c.Request) {
		resp = d.stream(c, run, idem.messageID())
	} else {
		resp = d.json(c, run, idem.messageID())
	}
	idem.finish(resp)
}

// stream answers with an event stream; it returns what to replay, nil
// when the request failed before anything happened.
func (d *dialogAPI) stream(c *gin.Context, run runTurn, messageID string) *dialog.Replay {
	s := newSSE(c, d.ping, d.streams)
	if c.GetHeader(headerIdempotencyKey) == "" {
		s.withoutRecording()
	}
	turn, err := run(c.Request.Context(), s, messageID)
	started, _ := s.recorded()
	if err != nil && started {
		// The status is already 200: the failure travels as the last event.
		e := d.toAPIError(err)
		if e == errInternal {
			d.log.Error("request failed", "request_id", c.GetString(ctxRequestID), "route", routeLabel(c), "err", err)
		}
		s.Send(agent.Error{Code: e.Code, Message: e.Message})
	}
	s.close()
	if !started {
		// Refused before the run began, or the text joined another
		// request's run, whose stream carries the answer.
		return d.writeTurn(c, turn, err)
	}
	_, rec := s.recorded()
	return &dialog.Replay{Status: http.StatusOK, ContentType: "text/event-stream", Body: rec}
}

// json answers with the turn's new messages and its done event; a text
// that joined a reply already being generated is 202 Accepted.
func (d *dialogAPI) json(c *gin.Context, run runTurn, messageID string) *dialog.Replay {
	turn, err := run(c.Request.Context(), nil, messageID)
	return d.writeTurn(c, turn, err)
}

func (d *dialogAPI) writeTurn(c *gin.Context, turn dialog.Turn, err error) *dialog.Replay {
	if err != nil {
		d.fail(c, err)
		return nil
	}
	body, err := json.Marshal(turnOut(turn))
	if err != nil {
		d.fail(c, err)
		return nil
	}
	status := http.StatusOK
	switch {
	case turn.Queued:
		status = http.StatusAccepted
	case turn.Error != nil:
		status = turnStatus(turn.Error.Code)
		if turn.Error.Code == dialog.EventServerRestarting {
			c.Header("Retry-After", "1")
		}
	}
	c.Data(status, "application/json; charset=utf-8", body)
	return &dialog.Replay{Status: status, ContentType: "application/json; charset=utf-8", Body: string(body)}
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

// finish stores the response to replay, or frees the key when the request
// was refused before it changed anything, so a retry runs afresh.
func (i *idempotency) finish(resp *dialog.Replay) {
	if i == nil {
		return
	}
	ctx := context.WithoutCancel(i.c.Request.Context())
	p, tenant := principal(i.c), i.c.Param("tenant")
	var err error
	if resp == nil {
		err = i.d.rt.IdempotencyKeys().Forget(ctx, p, tenant, i.key)
	} else {
		err = i.d.rt.IdempotencyKeys().Complete(ctx, p, tenant, i.key, *resp)
	}
	if err != nil {
		i.d.log.Error("idempotency key not recorded", "request_id", i.c.GetString(ctxRequestID), "err", err)
	}
}
