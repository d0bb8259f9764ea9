package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// listInbox: GET /v1/tenants/{tenant}/inbox -> handed-off dialogs, the
// longest wait first, with counts.
func (d *dialogAPI) listInbox(c *gin.Context) {
	if wantsSSE(c.Request) {
		d.followInbox(c)
		return
	}
	in, err := d.rt.Handoffs().List(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, inboxOut(in))
}

func inboxOut(in dialog.Inbox) apiclient.Inbox {
	return apiclient.Inbox{Dialogs: mapAll(in.Dialogs, handoffOut), Waiting: in.Waiting, Taken: in.Taken}
}

// followInbox: GET /inbox with Accept: text/event-stream -> an "inbox"
// event with the whole inbox now and whenever a dialog changes.
func (d *dialogAPI) followInbox(c *gin.Context) {
	d.live(c, func(s *sseStream) error {
		return d.rt.Handoffs().Follow(c.Request.Context(), principal(c), c.Param("tenant"), func(in dialog.Inbox) {
			s.Send(inboxEvent{inboxOut(in)})
		})
	})
}

// live answers with an event stream that follow writes until it returns;
// its error is the answer when nothing was sent yet, else the last event.
func (d *dialogAPI) live(c *gin.Context, follow func(s *sseStream) error) {
	s := newSSE(c, d.ping, d.streams).withoutRecording()
	err := follow(s)
	started, _ := s.recorded()
	switch {
	case err != nil && !started:
		d.fail(c, err)
	case err != nil:
		e := d.toAPIError(err)
		s.Send(agent.Error{Code: e.Code, Message: e.Message})
	}
	s.close()
}

// inboxEvent is the live inbox's event: {type: "inbox", dialogs, waiting, taken}.
type inboxEvent struct {
	apiclient.Inbox
}

func (inboxEvent) Type() string { return "inbox" }

// MarshalJSON adds the type to the inbox's fields.
func (e inboxEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		apiclient.Inbox
	}{"inbox", e.Inbox})
}

func handoffOut(h dialog.Handoff) apiclient.Handoff {
	out := apiclient.Handoff{Dialog: dialog.WireDialog(h.Dialog), RequestedAt: h.RequestedAt, Operator: h.Operator,
		OperatorName: h.OperatorName, AssignedAt: h.AssignedAt, Reason: h.Reason, Summary: h.Summary}
	if h.LastText != "" {
		out.LastMessage = &apiclient.LastMessage{Kind: h.LastKind, Text: h.LastText}
	}
	return out
}

// assignDialog: POST /v1/tenants/{tenant}/dialogs/{dialog}/assign
// {name?, member?} -> the handoff, now the caller's (or the member's);
// 409 when another operator has it.
func (d *dialogAPI) assignDialog(c *gin.Context) {
	var req apiclient.AssignRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	var h dialog.Handoff
	var err error
	if req.Member != "" {
		h, err = d.rt.Handoffs().AssignTo(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), req.Member)
	} else {
		h, err = d.rt.Handoffs().Assign(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), req.Name)
	}
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, handoffOut(h))
}

// postOperatorMessage: POST .../dialogs/{dialog}/operator-messages {text}
// -> the stored message.
func (d *dialogAPI) postOperatorMessage(c *gin.Context) {
	var req apiclient.OperatorMessageRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	m, err := d.rt.Handoffs().Post(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), req.Text)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, dialog.WireMessage(m))
}

// releaseDialog: POST .../dialogs/{dialog}/release -> the dialog, back
// with the bot.
func (d *dialogAPI) releaseDialog(c *gin.Context) {
	dlg, err := d.rt.Handoffs().Release(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, dialog.WireDialog(dlg))
}

// followDialog: GET .../dialogs/{dialog}/events -> the dialog's live
// stream (SSE). Message events carry their seq as the event id; a client
// resumes with Last-Event-ID (or ?after= where it cannot set headers).
func (d *dialogAPI) followDialog(c *gin.Context) {
	after, err := resumePoint(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.live(c, func(s *sseStream) error {
		return d.rt.Follow(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request), after, s.SendID)
	})
}

// resumePoint is the seq a live stream resumes after: Last-Event-ID, or
// the after query parameter; 0 from the start.
func resumePoint(c *gin.Context) (int64, error) {
	raw, pointer := c.GetHeader("Last-Event-ID"), "Last-Event-ID"
	if raw == "" {
		raw, pointer = c.Query("after"), "after"
	}
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest(pointer, "must be the seq of the last message received (a whole number)")
	}
	return n, nil
}
