package apiclient

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Handoff is a handed-off dialog in the operators' inbox.
type Handoff struct {
	Dialog Dialog `json:"dialog"`
	// RequestedAt is when the bot handed the dialog off.
	RequestedAt time.Time `json:"requested_at"`
	// Operator and OperatorName are who took it; empty while it waits.
	Operator     string     `json:"operator,omitempty"`
	OperatorName string     `json:"operator_name,omitempty"`
	AssignedAt   *time.Time `json:"assigned_at,omitempty"`
	// Reason and Summary are what the bot said when it handed off (the
	// inbox list only).
	Reason  string `json:"reason,omitempty"`
	Summary string `json:"summary,omitempty"`
	// LastMessage is the dialog's newest message with text (the inbox
	// list only).
	LastMessage *LastMessage `json:"last_message,omitempty"`
}

// LastMessage is a glimpse of a dialog's newest message: who said it
// (user, assistant or operator) and what.
type LastMessage struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Inbox is GET /inbox: handed-off dialogs, the longest wait first, with
// how many wait for an operator and how many are taken.
type Inbox struct {
	Dialogs []Handoff `json:"dialogs"`
	Waiting int64     `json:"waiting"`
	Taken   int64     `json:"taken"`
}

// AssignRequest takes a dialog; Name is what the end user sees of the
// operator (default: a signed-in user's email before the @, else
// "Support").
type AssignRequest struct {
	Name string `json:"name,omitempty"`
	// Member, a member's user id, gives the dialog to that member instead
	// of the caller (Name is then theirs: their email before the @).
	Member string `json:"member,omitempty"`
}

// OperatorMessageRequest is an operator's reply.
type OperatorMessageRequest struct {
	Text string `json:"text"`
}

// HandoffEvent is a live stream's "handoff" event: the dialog's status
// and the name of the operator who took it.
type HandoffEvent struct {
	Type     string `json:"type"` // "handoff"
	Status   string `json:"status"`
	Operator string `json:"operator,omitempty"`
}

// OperatorMessageEvent is a live stream's "operator_message" event.
type OperatorMessageEvent struct {
	Type    string  `json:"type"` // "operator_message"
	Message Message `json:"message"`
}

// TypingEvent is a live stream's "typing" event: the other side of a
// handoff writes. Who is "operator" (Name: as the end user sees them) or
// "user".
type TypingEvent struct {
	Type string `json:"type"` // "typing"
	Who  string `json:"who"`
	Name string `json:"name,omitempty"`
}

// ReadRequest marks a dialog read up to the message Seq.
type ReadRequest struct {
	Seq int64 `json:"seq"`
}

// ReadMark is how far one side of a dialog has read it, and a live
// stream's "read" event (Type set): Who is "user" or "operator", Seq the
// newest message it has seen.
type ReadMark struct {
	Type   string    `json:"type,omitempty"` // "read" in a stream
	Who    string    `json:"who"`
	Seq    int64     `json:"seq"`
	ReadAt time.Time `json:"read_at"`
}

// Typing tells the other side of a handed-off dialog that the caller
// writes (an operator, or the end user with a chat key).
func (c *Client) Typing(ctx context.Context, tenant, dialog string) error {
	return c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "typing"), struct{}{}, nil)
}

// MarkRead records that the caller's side has read the dialog up to
// message seq.
func (c *Client) MarkRead(ctx context.Context, tenant, dialog string, seq int64) (*ReadMark, error) {
	var out ReadMark
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "read"), ReadRequest{Seq: seq}, &out)
}

// Inbox lists the tenant's handed-off dialogs.
func (c *Client) Inbox(ctx context.Context, tenant string) (*Inbox, error) {
	var out Inbox
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "inbox"), nil, &out)
}

// Assign takes a handed-off dialog for the caller.
func (c *Client) Assign(ctx context.Context, tenant, dialog, name string) (*Handoff, error) {
	var out Handoff
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "assign"), AssignRequest{Name: name}, &out)
}

// PostOperatorMessage replies to the end user as the operator.
func (c *Client) PostOperatorMessage(ctx context.Context, tenant, dialog, text string) (*Message, error) {
	var out Message
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "operator-messages"), OperatorMessageRequest{Text: text}, &out)
}

// Release gives a handed-off dialog back to the bot.
func (c *Client) Release(ctx context.Context, tenant, dialog string) (*Dialog, error) {
	var out Dialog
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "release"), struct{}{}, &out)
}

// FollowDialog reads the dialog's live stream, after message seq after
// (sent as Last-Event-ID; 0 for all), calling onEvent for each event
// until ctx ends, the stream ends or onEvent fails.
func (c *Client) FollowDialog(ctx context.Context, tenant, dialog string, after int64, onEvent func(Event) error) error {
	path := tenantPath(tenant, "dialogs", dialog, "events")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return fmt.Errorf("apiclient: GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("apiclient: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeError(resp)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return fmt.Errorf("apiclient: GET %s: answered %s, not an event stream", path, resp.Header.Get("Content-Type"))
	}
	return readEvents(bufio.NewReader(resp.Body), onEvent)
}
