package api

import (
	"cmp"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// dialogAPI serves dialogs, their messages and the tenant's usage over the
// platform's dialog runtime.
type dialogAPI struct {
	*server
	rt *dialog.Runtime
	// ping is how often an idle event stream gets a comment, so proxies and
	// browsers do not close it while a tool runs.
	ping time.Duration
	// maxMessageBody caps the body of the routes that run a turn.
	maxMessageBody int64
	// streams counts open event streams.
	streams prometheus.Gauge
}

// defaultPing is the SSE keep-alive interval (docs/events.md, "Framing").
const defaultPing = 15 * time.Second

// defaultMaxMessageBody leaves room for dialog.MaxMessageChars runes of
// four bytes each, escaped, in a JSON envelope.
const defaultMaxMessageBody = 512 << 10

func newDialogAPI(s *server) *dialogAPI {
	body := int64(defaultMaxMessageBody)
	if s.runtime != nil {
		// Images travel as base64: four bytes for every three.
		body += dialog.MaxImages * (s.runtime.Images().MaxBytes()*4/3 + 1024)
	}
	return &dialogAPI{server: s, rt: s.runtime, ping: defaultPing, maxMessageBody: body, streams: s.streams}
}

// fail writes err like server.fail, adding Retry-After to rate limits.
func (d *dialogAPI) fail(c *gin.Context, err error) {
	if wait := dialog.RetryAfter(err); wait > 0 {
		c.Header("Retry-After", strconv.Itoa(int(wait/time.Second)))
	}
	d.server.fail(c, err)
}

// UserTokenHeader carries the end user's signed token when a dialog is
// created, as the body's user_token may.
const UserTokenHeader = "X-Parley-User-Token"

// createDialog: POST /v1/tenants/{tenant}/bots/{bot}/dialogs -> the dialog.
func (d *dialogAPI) createDialog(c *gin.Context) {
	var req apiclient.CreateDialogRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	dlg, err := d.rt.Dialogs().Create(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"),
		dialog.CreateDialogInput{UserID: req.UserID, UserToken: cmp.Or(req.UserToken, c.GetHeader(UserTokenHeader)),
			Context: req.Context, Version: req.Version, Origin: browserOrigin(c.Request)})
	if err != nil {
		d.fail(c, err)
		return
	}
	out := dialog.WireDialog(dlg)
	out.MaxMessageChars = dialog.MaxMessageChars
	c.JSON(http.StatusCreated, out)
}

// listDialogs: GET /v1/tenants/{tenant}/dialogs?bot=&status=&user_id=&feedback=&q=&from=&to=&cursor=.
func (d *dialogAPI) listDialogs(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	ds, next, err := d.rt.Dialogs().List(c.Request.Context(), principal(c), c.Param("tenant"), dialogFilter(c), opts)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.DialogList{Dialogs: mapAll(ds, dialog.WireDialog), NextCursor: next})
}

// getDialog: GET /v1/tenants/{tenant}/dialogs/{dialog} -> the dialog with
// its messages and tool calls.
func (d *dialogAPI) getDialog(c *gin.Context) {
	dd, err := d.rt.Dialogs().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request))
	if err != nil {
		d.fail(c, err)
		return
	}
	out := detailOut(dd)
	out.MaxMessageChars = dialog.MaxMessageChars
	c.JSON(http.StatusOK, out)
}

// dialogFilter reads the filters of the dialog list and export:
// ?bot=&status=&user_id=&feedback=&q=&from=&to=&order=.
func dialogFilter(c *gin.Context) dialog.DialogFilter {
	return dialog.DialogFilter{Bot: c.Query("bot"), Status: c.Query("status"), From: c.Query("from"), To: c.Query("to"),
		UserID: c.Query("user_id"), Feedback: c.Query("feedback"), Query: c.Query("q"), Parent: c.Query("parent"), Order: c.Query("order"),
		Outcome: c.Query("outcome"), Label: c.Query("label")}
}

func detailOut(dd dialog.DialogDetail) apiclient.DialogDetail {
	return apiclient.DialogDetail{Dialog: dialog.WireDialog(dd.Dialog), Messages: mapAll(dd.Messages, dialog.WireMessage),
		ToolCalls: mapAll(dd.ToolCalls, toolCallOut), Feedback: dd.Feedback}
}

// cancelReply: POST /v1/tenants/{tenant}/dialogs/{dialog}/cancel -> whether
// a running reply was stopped.
func (d *dialogAPI) cancelReply(c *gin.Context) {
	out, err := d.rt.Dialogs().CancelReply(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.CancelReplyResponse{DialogID: out.DialogID, Canceled: out.Canceled})
}

// closeDialog: POST /v1/tenants/{tenant}/dialogs/{dialog}/close {reason} ->
// the closed dialog.
func (d *dialogAPI) closeDialog(c *gin.Context) {
	var req apiclient.CloseDialogRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	dlg, err := d.rt.Dialogs().Close(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), req.Reason)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, dialog.WireDialog(dlg))
}

func toolCallOut(c dialog.ToolCall) apiclient.ToolCall {
	return apiclient.ToolCall{ID: c.ID, MessageID: c.MessageID, Name: c.Name, Arguments: c.Arguments,
		Result: c.Result, IsError: c.IsError, Status: c.Status, DurationMS: c.DurationMS}
}

func turnOut(t dialog.Turn) apiclient.Turn {
	out := apiclient.Turn{DialogID: t.DialogID, Messages: mapAll(t.Messages, dialog.WireMessage),
		Pending: mapAll(t.Pending, dialog.WirePending), Queued: t.Queued}
	if t.Done != nil {
		out.Done = &apiclient.Done{Text: t.Done.Text, Turns: t.Done.Turns, StopReason: string(t.Done.StopReason),
			Usage: apiclient.Usage{InputTokens: t.Done.Usage.InputTokens, OutputTokens: t.Done.Usage.OutputTokens}}
	}
	if t.Error != nil {
		out.Error = &apiclient.EventError{Code: t.Error.Code, Message: t.Error.Message, Retryable: t.Error.Retryable}
	}
	return out
}
