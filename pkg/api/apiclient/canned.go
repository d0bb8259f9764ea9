package apiclient

import (
	"context"
	"net/http"
	"time"
)

// CannedReply is a text operators insert in a reply by typing /shortcut.
type CannedReply struct {
	ID        string    `json:"id"`
	Shortcut  string    `json:"shortcut"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CannedReplyRequest is POST /canned-replies (both fields) and PATCH
// /canned-replies/{id} (either).
type CannedReplyRequest struct {
	Shortcut *string `json:"shortcut,omitempty"`
	Text     *string `json:"text,omitempty"`
}

// CannedReplyList is GET /canned-replies, by shortcut.
type CannedReplyList struct {
	CannedReplies []CannedReply `json:"canned_replies"`
}

// CreateCannedReply adds a canned reply.
func (c *Client) CreateCannedReply(ctx context.Context, tenant, shortcut, text string) (*CannedReply, error) {
	var out CannedReply
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "canned-replies"), CannedReplyRequest{Shortcut: &shortcut, Text: &text}, &out)
}

// CannedReplies lists the tenant's canned replies.
func (c *Client) CannedReplies(ctx context.Context, tenant string) (*CannedReplyList, error) {
	var out CannedReplyList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "canned-replies"), nil, &out)
}
