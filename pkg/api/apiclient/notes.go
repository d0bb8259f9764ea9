package apiclient

import (
	"context"
	"net/http"
	"time"
)

// Note is a member's internal note on a dialog; the end user never sees
// it.
type Note struct {
	ID       string `json:"id"`
	DialogID string `json:"dialog_id"`
	// Author is who wrote it (a user id, key:<id> or platform) and
	// AuthorName the name the console shows.
	Author     string    `json:"author"`
	AuthorName string    `json:"author_name"`
	Text       string    `json:"text"`
	CreatedAt  time.Time `json:"created_at"`
}

// NoteRequest is POST /dialogs/{dialog}/notes.
type NoteRequest struct {
	Text string `json:"text"`
}

// NoteList is GET /dialogs/{dialog}/notes: the notes, oldest first.
type NoteList struct {
	Notes []Note `json:"notes"`
}

// AddNote writes an internal note on the dialog.
func (c *Client) AddNote(ctx context.Context, tenant, dialog, text string) (*Note, error) {
	var out Note
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "notes"), NoteRequest{Text: text}, &out)
}

// Notes lists the dialog's internal notes.
func (c *Client) Notes(ctx context.Context, tenant, dialog string) (*NoteList, error) {
	var out NoteList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "dialogs", dialog, "notes"), nil, &out)
}
