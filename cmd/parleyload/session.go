package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// botConfig is the bot every dialog talks to: a real prompt with
// background, tone, an action book and a native tool, so the per-turn
// work (prompt, tool definitions) is that of a typical bot.
const botConfig = `{
  "basic_settings": {"name": "Load Support", "description": "Answers questions about orders",
    "background": "Acme sells outdoor gear online and ships within the EU.",
    "language": "English", "tone": "Friendly and brief", "greeting": "Hi! How can I help?"},
  "action_books": [{"condition": "When the customer asks the time", "action": "Call current_time", "tools": ["current_time"]}],
  "native_tools": ["current_time"],
  "llm": {"model": "fake-model"}
}`

// session is one tenant with a published bot, as its API key sees it,
// on every server under load: its dialogs are spread over them in turn.
type session struct {
	client  *apiclient.Client // the first server's, which set the tenant up
	servers []*apiclient.Client
	next    atomic.Uint64
	tenant  string
	bot     string
}

// dialogRef is a dialog and the server that answers it.
type dialogRef struct {
	ID     string
	client *apiclient.Client
}

// newHTTPClient keeps a connection per concurrent dialog alive, so the
// load measures turns and not TCP handshakes.
func newHTTPClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns + 16
	tr.MaxIdleConnsPerHost = conns + 16
	return &http.Client{Transport: tr}
}

// newSession creates a tenant and its bot through the API with the
// platform token, then acts with the tenant's admin key.
func newSession(ctx context.Context, t *target, hc *http.Client) (*session, error) {
	op := apiclient.New(t.URL, t.Token).WithHTTPClient(hc)
	slug := fmt.Sprintf("load-%d", time.Now().UnixNano()%1e9)
	created, err := op.CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: slug, Name: "Load " + slug})
	if err != nil {
		return nil, fmt.Errorf("create tenant %s: %w", slug, err)
	}
	s := &session{client: op.WithToken(created.APIKey.Key), tenant: slug, bot: "support"}
	s.servers = []*apiclient.Client{s.client}
	for _, u := range t.More {
		s.servers = append(s.servers, apiclient.New(u, created.APIKey.Key).WithHTTPClient(hc))
	}
	if _, err := s.client.CreateBot(ctx, slug, s.bot, json.RawMessage(botConfig)); err != nil {
		return nil, fmt.Errorf("create bot: %w", err)
	}
	if _, err := s.client.Publish(ctx, slug, s.bot, 1); err != nil {
		return nil, fmt.Errorf("publish bot: %w", err)
	}
	return s, nil
}

// newDialog starts a dialog with the bot on the next server, round robin.
func (s *session) newDialog(ctx context.Context) (dialogRef, error) {
	c := s.servers[(s.next.Add(1)-1)%uint64(len(s.servers))]
	d, err := c.CreateDialog(ctx, s.tenant, s.bot, apiclient.CreateDialogRequest{})
	if err != nil {
		return dialogRef{}, fmt.Errorf("create dialog: %w", err)
	}
	return dialogRef{ID: d.ID, client: c}, nil
}

// send runs one turn as JSON or as an event stream and checks that it
// ended with the fake's reply.
func (s *session) send(ctx context.Context, mode string, dialog dialogRef, text string) error {
	if mode == modeJSON {
		turn, err := dialog.client.SendMessage(ctx, s.tenant, dialog.ID, text)
		if err != nil {
			return err
		}
		if turn.Done == nil || turn.Done.Text != replyText {
			return fmt.Errorf("turn ended without the reply: %+v", turn.Done)
		}
		return nil
	}
	var last apiclient.Event
	err := dialog.client.StreamMessage(ctx, s.tenant, dialog.ID, text, "", func(e apiclient.Event) error {
		last = e
		return nil
	})
	if err != nil {
		return err
	}
	if last.Type != "done" {
		return fmt.Errorf("stream ended with %q, not done: %s", last.Type, last.Data)
	}
	return nil
}
