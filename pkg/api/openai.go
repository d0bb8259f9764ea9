package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/openai/wire"
	"github.com/parleyhq/parley/pkg/platform"
)

// The OpenAI face: POST /v1/chat/completions and GET /v1/models in
// OpenAI's shapes, so any OpenAI SDK talks to a tenant's bots. The key
// names the tenant, `model` a bot. A request runs one turn of a dialog
// through the same runtime calls as the REST message routes
// (Runtime.SendMessage and SubmitToolResults), so limits, quotas,
// metering, logs and stored history apply alike.

// headerDialog names the stored dialog a chat completion continues; every
// answer carries it, so a client may continue the dialog it started.
const headerDialog = "X-Parley-Dialog"

// channelOpenAI is the {{channel}} of dialogs this face starts.
const channelOpenAI = "openai"

// openaiAPI serves the OpenAI face over the dialog runtime.
type openaiAPI struct {
	*dialogAPI
}

// authenticate lets only a tenant's server key through, answering in
// OpenAI's error shape otherwise.
func (o *openaiAPI) authenticate(c *gin.Context) {
	p, err := o.serverKey(c)
	if err != nil {
		o.fail(c, err)
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

// listModels: GET /v1/models, the tenant's published bots by slug.
func (o *openaiAPI) listModels(c *gin.Context) {
	p := principal(c)
	bots, err := o.rt.ChatBots(c.Request.Context(), p, p.TenantID)
	if err != nil {
		o.fail(c, err)
		return
	}
	out := modelList{Object: "list", Data: make([]modelObject, len(bots))}
	for i, b := range bots {
		out.Data[i] = modelObject{ID: b.Slug, Object: "model", Created: b.CreatedAt.Unix(), OwnedBy: p.TenantID}
	}
	c.JSON(http.StatusOK, out)
}

// getModel: GET /v1/models/{model}, one of them (OpenAI's retrieve).
func (o *openaiAPI) getModel(c *gin.Context) {
	p := principal(c)
	b, err := o.rt.ChatBot(c.Request.Context(), p, p.TenantID, c.Param("model"))
	if err != nil {
		o.fail(c, modelError(err, c.Param("model")))
		return
	}
	c.JSON(http.StatusOK, modelObject{ID: b.Slug, Object: "model", Created: b.CreatedAt.Unix(), OwnedBy: p.TenantID})
}

// chatCompletions: POST /v1/chat/completions. Without X-Parley-Dialog
// the conversation is the request's messages: a new dialog is stored,
// seeded with all but the new input, and answers it. With the header the
// stored dialog is continued with the request's last user message or its
// closing tool messages.
func (o *openaiAPI) chatCompletions(c *gin.Context) {
	ctx := c.Request.Context()
	var req chatRequest
	if err := o.decode(c, &req); err != nil {
		o.fail(c, err)
		return
	}
	if err := req.check(); err != nil {
		o.fail(c, err)
		return
	}
	p := principal(c)
	bot, err := o.rt.ChatBot(ctx, p, p.TenantID, req.Model)
	if err != nil {
		o.fail(c, modelError(err, req.Model))
		return
	}
	// Narrowed to the bot, the caller cannot reach another bot's dialog
	// by naming it in the header: the runtime answers not_found.
	p = p.ForBot(bot.ID)
	tools, err := req.clientTools(bot)
	if err != nil {
		o.fail(c, err)
		return
	}
	dialogID := c.GetHeader(headerDialog)
	if !isText(dialogID) {
		// PostgreSQL refuses such text: it would be a 500, not a 4xx.
		o.fail(c, badRequest("/headers/"+headerDialog, "must be UTF-8 text without NUL characters"))
		return
	}
	read := fullConversation
	if dialogID != "" {
		read = newInput
	}
	conv, err := read(req.Messages)
	if err != nil {
		o.fail(c, err)
		return
	}
	if dialogID == "" {
		d, err := o.rt.Dialogs().Create(ctx, p, p.TenantID, bot.ID, dialog.CreateDialogInput{
			UserID: req.User, Channel: channelOpenAI, History: conv.history})
		if err != nil {
			o.fail(c, conv.params(err))
			return
		}
		dialogID = d.ID
	}
	c.Header(headerDialog, dialogID)
	run := func(ctx context.Context, sink agent.Sink) (turn dialog.Turn, err error) {
		if conv.results != nil {
			in := dialog.ToolResultsInput{Results: conv.results, ClientTools: tools}
			turn, err = o.rt.SubmitToolResults(ctx, p, p.TenantID, dialogID, in, sink)
		} else {
			turn, err = o.rt.SendMessage(ctx, p, p.TenantID, dialogID, dialog.SendInput{Text: conv.text, ClientTools: tools}, sink)
		}
		return turn, conv.params(err)
	}
	reply := completionFor(bot, time.Now())
	if req.Stream {
		o.stream(c, run, reply, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	turn, err := run(ctx, nil)
	if err == nil {
		err = turnFailure(turn)
	}
	if turn.Error != nil && c.GetHeader(headerDialog) != "" {
		// The text is stored in the dialog the request continues: an SDK
		// retrying the 5xx would store it again, once per try.
		c.Header("X-Should-Retry", "false")
	}
	if err != nil {
		o.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, reply.whole(turn))
}

// stream answers with chat.completion.chunk frames and data: [DONE]. A
// failure before the run began is an ordinary error response; one after
// is an error frame, which OpenAI's SDKs raise.
func (o *openaiAPI) stream(c *gin.Context, run faceTurn, reply completion, usage bool) {
	sse := newSSE(c, o.ping, o.streams).withoutRecording()
	sink := &chunkSink{sse: sse, reply: reply, usage: usage}
	turn, err := run(c.Request.Context(), sink)
	if err == nil && !sink.began() {
		err = turnFailure(turn) // a text queued behind a running reply
	}
	if err != nil && sink.began() {
		sink.fail(o.failure(c, err).body)
	}
	sse.close()
	if err != nil && !sink.began() {
		o.fail(c, err)
	}
}

// faceTurn runs a completion's turn, sending events to sink (nil for
// JSON).
type faceTurn func(ctx context.Context, sink agent.Sink) (dialog.Turn, error)

// turnFailure is the error of a turn that gave no reply: its run stopped
// with an error, or its text joined a reply being generated.
func turnFailure(t dialog.Turn) error {
	switch {
	case t.Queued:
		return &apiclient.Error{Code: apiclient.CodeConflict,
			Message: "a reply to this dialog is being generated; your message joined it and is answered there"}
	case t.Error != nil:
		// The loop's description is caller-safe: a code and a fixed text;
		// the status is the one a JSON turn of the REST route answers.
		return &openaiFailure{status: turnStatus(t.Error.Code),
			body: wire.Error{Message: t.Error.Message, Type: "server_error", Code: &t.Error.Code}}
	}
	return nil
}

// openaiFailure is an error already in OpenAI's shape, with its status.
type openaiFailure struct {
	status int
	body   wire.Error
}

func (e *openaiFailure) Error() string { return e.body.Message }

// modelError says that the model was not found, as OpenAI says it.
func modelError(err error, model string) error {
	var pe *platform.Error
	if !errors.As(err, &pe) || pe.Code != platform.CodeNotFound {
		return err
	}
	param, code := "model", "model_not_found"
	return &openaiFailure{status: http.StatusNotFound, body: wire.Error{Type: "invalid_request_error", Param: &param, Code: &code,
		Message: fmt.Sprintf("The model %q does not exist: no bot of this tenant has that slug.", model)}}
}

// decode reads the body leniently: OpenAI's SDKs send fields Parley does
// not use, and those are ignored rather than refused.
func (o *openaiAPI) decode(c *gin.Context, dst *chatRequest) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, o.maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &apiclient.Error{Code: apiclient.CodeTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)}
	case err != nil:
		return badRequest("", "the request body could not be read")
	}
	if err := checkObject(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return badRequest(jsonPointer(typeErr.Field), fmt.Sprintf("must be %s, not %s", typeErr.Type, typeErr.Value))
		}
		return badRequest("", "request body is not a valid JSON object")
	}
	return nil
}

// fail answers err in OpenAI's error shape with the status Parley's code
// maps to (422 becomes OpenAI's 400), Retry-After on rate limits.
func (o *openaiAPI) fail(c *gin.Context, err error) {
	wait := dialog.RetryAfter(err)
	if wait > 0 {
		c.Header("Retry-After", strconv.Itoa(int(wait/time.Second)))
	}
	f := o.failure(c, err)
	// OpenAI's SDKs retry a 409 or 429 by themselves, sleeping as long as
	// Retry-After says, unless X-Should-Retry says no. Only a rate limit or
	// a busy dialog passes later: the quota renews at midnight (the SDK
	// would sleep until then), a text that joined a running reply would be
	// sent twice, and a closed dialog stays closed.
	if (f.status == http.StatusConflict || f.status == http.StatusTooManyRequests) && (wait == 0 || dialog.QuotaReached(err)) {
		c.Header("X-Should-Retry", "false")
	}
	c.AbortWithStatusJSON(f.status, wire.ErrorBody{Error: f.body})
}

// failure classifies err as OpenAI's error shape and status, logging an
// internal one with its detail.
func (o *openaiAPI) failure(c *gin.Context, err error) *openaiFailure {
	var f *openaiFailure
	if errors.As(err, &f) {
		return f
	}
	e := o.toAPIError(err)
	if e == errInternal {
		o.log.Error("request failed", "request_id", c.GetString(ctxRequestID), "route", routeLabel(c), "err", err)
	}
	status, ok := statusOf[e.Code]
	if !ok || e.Code == apiclient.CodeInvalid {
		status = http.StatusBadRequest
	}
	body := openaiBody(e, openaiType(status))
	if e.Code == apiclient.CodeRateLimited {
		// OpenAI's own codes, which clients test to tell a limit that
		// passes in a moment from a quota that does not.
		code := "rate_limit_exceeded"
		if dialog.QuotaReached(err) {
			body.Type, code = "insufficient_quota", "insufficient_quota"
		}
		body.Code = &code
	}
	return &openaiFailure{status: status, body: body}
}

// openaiType is OpenAI's error type for a status.
func openaiType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusTooManyRequests:
		return "requests" // OpenAI's type for a rate limit on requests
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// openaiBody is an API error in OpenAI's shape: the message followed by
// its details, the first detail's field as param, Parley's code as code.
func openaiBody(e *apiclient.Error, typ string) wire.Error {
	body := wire.Error{Message: e.Message, Type: typ}
	var notes []string
	for _, d := range e.Details {
		notes = append(notes, strings.TrimSpace(pointerParam(d.Pointer)+" "+d.Message))
	}
	if len(notes) > 0 {
		body.Message += ": " + strings.Join(notes, "; ")
	}
	if len(e.Details) > 0 && e.Details[0].Pointer != "" {
		param := pointerParam(e.Details[0].Pointer)
		body.Param = &param
	}
	code := e.Code
	body.Code = &code
	return body
}
