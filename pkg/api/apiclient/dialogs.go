package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// This file is the wire format and the calls of dialogs, messages and
// usage (docs/api.md; the stream's events are in docs/events.md).

// CreateDialogRequest starts a dialog with a bot.
type CreateDialogRequest struct {
	// UserID names the end user; server-side (sk_) callers only.
	UserID string `json:"user_id,omitempty"`
	// UserToken is the end user's signed token (also accepted in the
	// X-Parley-User-Token header); its sub becomes the user id.
	UserToken string            `json:"user_token,omitempty"`
	Context   map[string]string `json:"context,omitempty"`
	// Version previews a version other than the published one (editors).
	Version int `json:"version,omitempty"`
}

// Dialog is one conversation with a bot version.
type Dialog struct {
	ID      string            `json:"id"`
	BotID   string            `json:"bot_id"`
	Version int               `json:"version"`
	Preview bool              `json:"preview,omitempty"`
	UserID  string            `json:"user_id,omitempty"`
	Channel string            `json:"channel"`
	Context map[string]string `json:"context"`
	Status  string            `json:"status"`
	// ClosedReason says why a closed dialog was closed.
	ClosedReason string `json:"closed_reason,omitempty"`
	// ParentDialogID and ParentCallID, on the dialog of a sub-run (an
	// agent called as a tool), name the dialog and the tool call that
	// started it. GET /dialogs?parent={dialog} lists a dialog's sub-runs.
	ParentDialogID string `json:"parent_dialog_id,omitempty"`
	ParentCallID   string `json:"parent_call_id,omitempty"`
	Greeting       string `json:"greeting,omitempty"`
	// Pending are the calls a paused dialog waits for.
	Pending []PendingCall `json:"pending,omitempty"`
	// Outcome is how the dialog ended: resolved, handed_off, abandoned or
	// failed; null while it is open (docs/insights.md). OutcomeReason
	// says which fact decided it.
	Outcome       *string    `json:"outcome"`
	OutcomeReason string     `json:"outcome_reason,omitempty"`
	OutcomeAt     *time.Time `json:"outcome_at,omitempty"`
	// Rating is the end user's rating of the dialog, 1 to 5; absent when
	// none was given.
	Rating int `json:"rating,omitempty"`
	// Labels are the tenant's own tags (PUT /dialogs/{dialog}/labels).
	Labels    []string  `json:"labels"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Summary is what a list shows of the dialog (lists only).
	Summary *DialogSummary `json:"summary,omitempty"`
	// MaxMessageChars is the most characters a message to the dialog may
	// have (creating and getting a dialog only), so a chat client can say
	// the limit before sending.
	MaxMessageChars int `json:"max_message_chars,omitempty"`
}

// DialogSummary is a listed dialog's snippet (the first message matching
// the search, else the first user message) and counts.
type DialogSummary struct {
	Snippet      string `json:"snippet"`
	Messages     int64  `json:"messages"`
	ToolErrors   int64  `json:"tool_errors"`
	FeedbackUp   int64  `json:"feedback_up"`
	FeedbackDown int64  `json:"feedback_down"`
}

// FeedbackRequest rates a reply: rating "up" or "down", an optional
// comment.
type FeedbackRequest struct {
	Rating  string `json:"rating"`
	Comment string `json:"comment,omitempty"`
}

// Feedback is the rating a reply got.
type Feedback struct {
	MessageID string    `json:"message_id"`
	Rating    string    `json:"rating"`
	Comment   string    `json:"comment"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// DialogQuery narrows ListDialogs; empty fields match everything.
type DialogQuery struct {
	Bot, Status, UserID, Feedback, Q, From, To, Cursor string
}

// ActivityReport is a tenant's (or bot's) activity day by day or hour by
// hour (Bucket "day" or "hour"); From and To are the first and last
// bucket, days (YYYY-MM-DD) or UTC hours (YYYY-MM-DDTHH).
type ActivityReport struct {
	From   string        `json:"from"`
	To     string        `json:"to"`
	Bot    string        `json:"bot,omitempty"`
	Bucket string        `json:"bucket"`
	Days   []ActivityDay `json:"days"`
}

// ActivityDay is one UTC day, or one UTC hour (Hour, YYYY-MM-DDTHH, with
// its Day), of activity.
type ActivityDay struct {
	Day          string  `json:"day"`
	Hour         string  `json:"hour,omitempty"`
	Dialogs      int64   `json:"dialogs"`
	EndUsers     int64   `json:"end_users"`
	Messages     int64   `json:"messages"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostMicroUSD int64   `json:"cost_micro_usd"`
	CostUSD      float64 `json:"cost_usd"`
	ToolCalls    int64   `json:"tool_calls"`
	ToolErrors   int64   `json:"tool_errors"`
	FeedbackUp   int64   `json:"feedback_up"`
	FeedbackDown int64   `json:"feedback_down"`
}

// PendingCall is a client tool call to run, or a call to confirm (Kind
// "client" or "confirmation").
type PendingCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Kind      string          `json:"kind"`
}

// Message is one stored message of a dialog.
type Message struct {
	ID   string `json:"id"`
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	Role string `json:"role"`
	// Content is the message's blocks (text, tool_use, tool_result).
	Content  json.RawMessage `json:"content"`
	Text     string          `json:"text"`
	Model    string          `json:"model,omitempty"`
	Provider string          `json:"provider,omitempty"`
	// Version is the bot version that produced an assistant message.
	Version int `json:"version,omitempty"`
	// Status is complete, streaming, interrupted or queued.
	Status string `json:"status"`
	Usage  *Usage `json:"usage,omitempty"`
	// Author names the person who wrote an operator message (kind and
	// role "operator").
	Author string `json:"author,omitempty"`
	// Citations are the knowledge passages an assistant message's text
	// cites as [n], in the order they first appear.
	Citations []Citation `json:"citations,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// ToolCall is a tool call of a dialog and its result.
type ToolCall struct {
	ID         string          `json:"id"`
	MessageID  string          `json:"message_id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     string          `json:"result"`
	IsError    bool            `json:"is_error"`
	Status     string          `json:"status"`
	DurationMS int64           `json:"duration_ms"`
}

// DialogDetail is a dialog with its whole history.
type DialogDetail struct {
	Dialog
	Messages  []Message  `json:"messages"`
	ToolCalls []ToolCall `json:"tool_calls"`
	Feedback  []Feedback `json:"feedback"`
}

// DialogList is one page of dialogs.
type DialogList struct {
	Dialogs    []Dialog `json:"dialogs"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// SendMessageRequest is a user message.
type SendMessageRequest struct {
	Text string `json:"text"`
	// Images are pictures sent with the text, for bots whose model reads
	// images: at most 4, each PNG, JPEG, GIF or WebP.
	Images []ImageInput `json:"images,omitempty"`
}

// ImageInput is one image of a message: its bytes (base64 in JSON) or an
// http(s) URL the server downloads; one of the two.
type ImageInput struct {
	Data []byte `json:"data,omitempty"`
	URL  string `json:"url,omitempty"`
}

// ToolResultsRequest hands back the results of client tool calls.
type ToolResultsRequest struct {
	Results []ToolResult `json:"results"`
}

// ToolResult is the caller's result of one client tool call.
type ToolResult struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// ConfirmationRequest approves or declines a call awaiting confirmation.
type ConfirmationRequest struct {
	ID       string `json:"id"`
	Approved *bool  `json:"approved"`
}

// Turn is the JSON answer of the message, tool-result and confirmation
// routes: the messages stored by the request and how the run ended.
type Turn struct {
	DialogID string    `json:"dialog_id"`
	Messages []Message `json:"messages"`
	// Done is nil when the text was queued behind a reply in progress.
	Done    *Done         `json:"done,omitempty"`
	Error   *EventError   `json:"error,omitempty"`
	Pending []PendingCall `json:"pending,omitempty"`
	// Queued says the text joined a reply already being generated (202).
	Queued bool `json:"queued,omitempty"`
}

// Done is how a run ended: its final text, turns, usage and stop reason.
type Done struct {
	Text       string `json:"text"`
	Turns      int    `json:"turns"`
	Usage      Usage  `json:"usage"`
	StopReason string `json:"stop_reason"`
}

// EventError says why a run stopped with stop reason "error".
type EventError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// UsageRow is the usage of one day, bot, key or provider.
type UsageRow struct {
	// Group is the day, bot id, key id ("" for use without a key) or
	// provider name ("" for use metered before providers were recorded).
	Group        string  `json:"group"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostMicroUSD int64   `json:"cost_micro_usd"`
	CostUSD      float64 `json:"cost_usd"`
	ToolCalls    int64   `json:"tool_calls"`
	Turns        int64   `json:"turns"`
	// EmbeddingTokens are the tokens knowledge searches embedded (the
	// bots', their tests' and the search route's queries), apart from
	// the model's.
	EmbeddingTokens int64 `json:"embedding_tokens"`
}

// UsageReport is a tenant's usage between two days, grouped.
type UsageReport struct {
	From    string     `json:"from,omitempty"`
	To      string     `json:"to,omitempty"`
	GroupBy string     `json:"group_by"`
	Usage   []UsageRow `json:"usage"`
}

// DialogEvent is the data of the "dialog" event that opens every stream.
type DialogEvent struct {
	Type     string `json:"type"` // "dialog"
	DialogID string `json:"dialog_id"`
}

// MessageEvent is the data of a "message" event: a message as soon as it
// is stored, exactly as the dialog's history returns it.
type MessageEvent struct {
	Type    string  `json:"type"` // "message"
	Message Message `json:"message"`
}

// AgentStartEvent is the data of an "agent_start" event: the model called
// an agent (another bot, as a tool) and its sub-run starts. Until the
// "agent_end" with the same Agent, events whose "agent" field is Agent
// (or starts with Agent + "/") are the sub-run's: the loop's events
// (turn_start, text_delta, tool_call, tool_result, turn_end, ...) with
// "agent" added. The sub-run's own done is its agent_end.
type AgentStartEvent struct {
	Type string `json:"type"` // "agent_start"
	// Agent is the path of agent tool names from the dialog's bot down,
	// "/"-separated ("research", "research/facts").
	Agent    string `json:"agent"`
	Bot      string `json:"bot"`
	CallID   string `json:"call_id"`
	DialogID string `json:"dialog_id"`
}

// AgentEndEvent is the data of an "agent_end" event: how a sub-run ended.
// Text is its answer, the calling model's tool result (empty for widget
// callers, who see only that an agent ran).
type AgentEndEvent struct {
	Type       string `json:"type"` // "agent_end"
	Agent      string `json:"agent"`
	CallID     string `json:"call_id"`
	DialogID   string `json:"dialog_id"`
	StopReason string `json:"stop_reason"`
	Text       string `json:"text"`
	Turns      int    `json:"turns"`
	Usage      Usage  `json:"usage"`
}

// Event is one server-sent event: its type and its JSON (which repeats the
// type in its "type" field).
type Event struct {
	Type string
	Data json.RawMessage
	// ID is the event's id line: on a dialog's live stream, the seq of a
	// message event, to resume after with Last-Event-ID.
	ID string
}

// CreateDialog starts a dialog with the tenant's bot.
func (c *Client) CreateDialog(ctx context.Context, tenant, bot string, req CreateDialogRequest) (*Dialog, error) {
	var out Dialog
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots", bot, "dialogs"), req, &out)
}

// ListDialogs lists the tenant's dialogs, optionally of one bot or status.
func (c *Client) ListDialogs(ctx context.Context, tenant, bot, status, cursor string) (*DialogList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"bot": bot, "status": status, "cursor": cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	path := tenantPath(tenant, "dialogs")
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out DialogList
	return &out, c.Do(ctx, http.MethodGet, path, nil, &out)
}

// SearchDialogs lists one page of the tenant's dialogs matching q.
func (c *Client) SearchDialogs(ctx context.Context, tenant string, q DialogQuery) (*DialogList, error) {
	v := url.Values{}
	for k, val := range map[string]string{"bot": q.Bot, "status": q.Status, "user_id": q.UserID, "feedback": q.Feedback,
		"q": q.Q, "from": q.From, "to": q.To, "cursor": q.Cursor} {
		if val != "" {
			v.Set(k, val)
		}
	}
	var out DialogList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "dialogs")+"?"+v.Encode(), nil, &out)
}

// PutFeedback rates a reply of the dialog, replacing an earlier rating.
func (c *Client) PutFeedback(ctx context.Context, tenant, dialog, message string, req FeedbackRequest) (*Feedback, error) {
	var out Feedback
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "messages", message, "feedback"), req, &out)
}

// Activity reports the tenant's activity day by day, days from..to (empty:
// the last 30 days), of one bot ("" for all).
func (c *Client) Activity(ctx context.Context, tenant, from, to, bot string) (*ActivityReport, error) {
	return c.ActivityBy(ctx, tenant, ActivityQuery{From: from, To: to, Bot: bot})
}

// ActivityQuery selects a chart's range, bot and bucket ("day" or "hour";
// empty: day) for ActivityBy.
type ActivityQuery struct {
	From, To, Bot, Bucket string
}

// ActivityBy reports the tenant's activity as q selects it.
func (c *Client) ActivityBy(ctx context.Context, tenant string, q ActivityQuery) (*ActivityReport, error) {
	v := url.Values{}
	for k, val := range map[string]string{"from": q.From, "to": q.To, "bot": q.Bot, "bucket": q.Bucket} {
		if val != "" {
			v.Set(k, val)
		}
	}
	var out ActivityReport
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "usage", "series")+"?"+v.Encode(), nil, &out)
}

// GetDialog returns a dialog with its messages and tool calls.
func (c *Client) GetDialog(ctx context.Context, tenant, dialog string) (*DialogDetail, error) {
	var out DialogDetail
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "dialogs", dialog), nil, &out)
}

// SendMessage sends a user message and waits for the whole turn.
func (c *Client) SendMessage(ctx context.Context, tenant, dialog, text string) (*Turn, error) {
	var out Turn
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "messages"), SendMessageRequest{Text: text}, &out)
}

// SubmitToolResults resumes a dialog paused on client tools.
func (c *Client) SubmitToolResults(ctx context.Context, tenant, dialog string, results []ToolResult) (*Turn, error) {
	var out Turn
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "tool-results"), ToolResultsRequest{Results: results}, &out)
}

// Confirm approves or declines a call the dialog waits to have confirmed.
func (c *Client) Confirm(ctx context.Context, tenant, dialog, id string, approved bool) (*Turn, error) {
	var out Turn
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "confirmations"), ConfirmationRequest{ID: id, Approved: &approved}, &out)
}

// CloseDialogRequest closes a dialog.
type CloseDialogRequest struct {
	Reason string `json:"reason"`
}

// CancelReplyResponse says whether a reply was running and was stopped.
type CancelReplyResponse struct {
	DialogID string `json:"dialog_id"`
	Canceled bool   `json:"canceled"`
}

// CancelReply stops the reply being generated in the dialog.
func (c *Client) CancelReply(ctx context.Context, tenant, dialog string) (*CancelReplyResponse, error) {
	var out CancelReplyResponse
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "cancel"), struct{}{}, &out)
}

// CloseDialog closes the dialog with a reason; it takes no more messages.
func (c *Client) CloseDialog(ctx context.Context, tenant, dialog, reason string) (*Dialog, error) {
	var out Dialog
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "close"), CloseDialogRequest{Reason: reason}, &out)
}

// Usage reports the tenant's usage for days from..to (YYYY-MM-DD, empty
// for unbounded) grouped by "day", "bot" or "key".
func (c *Client) Usage(ctx context.Context, tenant, from, to, groupBy string) (*UsageReport, error) {
	q := url.Values{}
	for k, v := range map[string]string{"from": from, "to": to, "group_by": groupBy} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out UsageReport
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "usage")+"?"+q.Encode(), nil, &out)
}

// StreamMessage sends a user message and calls onEvent with each event of
// the reply as it arrives, until the stream ends or onEvent returns an
// error. idempotencyKey, when not empty, makes a retry replay the first
// stream instead of running the turn again.
func (c *Client) StreamMessage(ctx context.Context, tenant, dialog, text, idempotencyKey string, onEvent func(Event) error) error {
	path := tenantPath(tenant, "dialogs", dialog, "messages")
	body, err := json.Marshal(SendMessageRequest{Text: text})
	if err != nil {
		return fmt.Errorf("apiclient: POST %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("apiclient: POST %s: %w", path, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderCSRF, "1")
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("apiclient: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeError(resp)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return fmt.Errorf("apiclient: POST %s: answered %s, not an event stream (the text was queued behind a reply in progress)", path, resp.Header.Get("Content-Type"))
	}
	return readEvents(bufio.NewReader(resp.Body), onEvent)
}

// readEvents parses "event:" and "data:" lines; comments (pings) and
// unknown fields are skipped, as EventSource does.
func readEvents(r *bufio.Reader, onEvent func(Event) error) error {
	var ev Event
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && ev.Type != "":
			if cerr := onEvent(ev); cerr != nil {
				return cerr
			}
			ev = Event{}
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		}
		if errors.Is(err, io.EOF) {
			return nil // the stream ended
		}
		if err != nil {
			return fmt.Errorf("apiclient: read event stream: %w", err)
		}
	}
}

// Erased is what DELETE /end-users/{user_id} removed.
type Erased struct {
	Dialogs  int64 `json:"dialogs"`
	Messages int64 `json:"messages"`
	// MemoryNotes are the notes the tenant's bots kept about the user.
	MemoryNotes int64 `json:"memory_notes"`
}

// MemoryNote is a note a bot keeps about an end user across dialogs.
type MemoryNote struct {
	ID     string `json:"id"`
	BotID  string `json:"bot_id"`
	UserID string `json:"user_id"`
	Key    string `json:"key"`
	Value  string `json:"value"`
	// DialogID is the dialog that last wrote the note; it may be deleted.
	DialogID  string    `json:"dialog_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MemoryNoteList is GET /end-users/{user_id}/memory.
type MemoryNoteList struct {
	Notes []MemoryNote `json:"notes"`
}

// UserMemory lists the notes the tenant's bots keep about the end user.
func (c *Client) UserMemory(ctx context.Context, tenant, userID string) (*MemoryNoteList, error) {
	var out MemoryNoteList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "end-users", userID, "memory"), nil, &out)
}

// DeleteMemoryNote deletes one note a bot keeps about the end user.
func (c *Client) DeleteMemoryNote(ctx context.Context, tenant, userID, id string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "end-users", userID, "memory", id), nil, nil)
}

// EraseEndUser erases the end user's dialogs and memory notes.
func (c *Client) EraseEndUser(ctx context.Context, tenant, userID string) (*Erased, error) {
	var out Erased
	return &out, c.Do(ctx, http.MethodDelete, tenantPath(tenant, "end-users", userID), nil, &out)
}
