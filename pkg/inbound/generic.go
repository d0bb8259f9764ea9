package inbound

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// GenericReply is a webhook channel's answer: in the response of a
// synchronous request, and replayed to a retry of it.
type GenericReply struct {
	DialogID       string `json:"dialog_id"`
	ConversationID string `json:"conversation_id"`
	// Status is "answered", "accepted" (async: the reply follows as
	// message.created), "queued" (joined a reply already being made),
	// "handoff" (a person answers) or "error".
	Status string `json:"status"`
	// Text is the bot's reply, its messages joined by blank lines.
	Text     string         `json:"text"`
	Messages []ReplyMessage `json:"messages"`
	// Error says why the reply stopped, for status "error".
	Error *ReplyError `json:"error,omitempty"`
}

// ReplyMessage is one message the bot stored in reply.
type ReplyMessage struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
}

// ReplyError is a stopped reply's reason.
type ReplyError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// generic handles a webhook channel's request: signed with the channel's
// whsec_ secret the Standard Webhooks way, webhook-id its delivery id.
func (s *Service) generic(ctx context.Context, ch platform.LiveChannel, h http.Header, body []byte) (Response, error) {
	if err := s.verifyGeneric(ch, h, body); err != nil {
		return Response{}, err
	}
	if err := checkDeliveryID("/headers/"+webhook.HeaderID, h.Get(webhook.HeaderID)); err != nil {
		return Response{}, err
	}
	req, err := channel.ParseGeneric(body)
	if err != nil {
		return Response{}, invalid(err)
	}
	msg := channel.Message{DeliveryID: h.Get(webhook.HeaderID), Conversation: req.ConversationID, User: req.UserID, Text: req.Text}
	if req.Async {
		return s.genericAsync(ctx, ch, msg)
	}
	claimed, first, err := s.claim(ctx, ch, msg.DeliveryID)
	if err != nil {
		return Response{}, err
	}
	if !claimed {
		return s.replay(ch, first.Response)
	}
	turn, err := s.send(ctx, ch, msg, "")
	if err != nil {
		if !stored(turn) {
			s.release(ctx, ch, msg.DeliveryID)
		}
		return Response{}, err
	}
	reply := genericReply(turn, req.ConversationID)
	raw, _ := json.Marshal(reply)
	s.finish(ctx, ch, msg.DeliveryID, string(raw))
	s.metrics.inbound(ch.Kind, outcomeAnswered)
	return Response{Status: http.StatusOK, Body: reply}, nil
}

// verifyGeneric checks a webhook channel's Standard Webhooks signature
// with its secret, or the previous one during a rotation's overlap.
func (s *Service) verifyGeneric(ch platform.LiveChannel, h http.Header, body []byte) error {
	var firstErr error
	for _, secret := range []string{ch.Secret, ch.PrevSecret} {
		if secret == "" {
			continue
		}
		key, err := webhook.SecretKey(secret)
		if err != nil {
			return platform.Wrap(err, platform.CodeInternal, "channel secret")
		}
		err = webhook.Verify(key, h, body, s.now())
		if err == nil {
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return refused(firstErr)
}

// genericAsync acknowledges at once and queues the answer (jobs.go),
// recorded with the delivery id in one commit; the reply reaches the
// tenant as the outbound webhook message.created. The conversation's
// dialog is found (or made) first, for the answer to name it.
func (s *Service) genericAsync(ctx context.Context, ch platform.LiveChannel, msg channel.Message) (Response, error) {
	first, err := s.opts.Store.Tenant(ch.TenantID).Channels().Delivery(ctx, ch.ID, msg.DeliveryID)
	if err == nil {
		return s.replay(ch, first.Response)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return Response{}, platform.Wrap(err, platform.CodeInternal, "read delivery")
	}
	dialogID, err := s.dialogFor(ctx, ch, msg)
	if err != nil {
		return Response{}, err
	}
	reply := GenericReply{DialogID: dialogID, ConversationID: msg.Conversation, Status: "accepted", Messages: []ReplyMessage{}}
	raw, _ := json.Marshal(reply)
	d := store.ChannelDelivery{TenantID: ch.TenantID, ChannelID: ch.ID, DeliveryID: msg.DeliveryID, Status: store.ChannelDeliveryDone,
		Response: string(raw)}
	claimed, first, err := s.queue(ctx, ch, d, msg)
	if err != nil {
		return Response{}, err
	}
	if !claimed { // a concurrent retry recorded it first
		return s.replay(ch, first.Response)
	}
	s.metrics.inbound(ch.Kind, outcomeAccepted)
	return Response{Status: http.StatusAccepted, Body: reply}, nil
}

// replay answers a retried delivery with what its first delivery got,
// never answering it again; while the first is still being answered, a
// conflict the sender retries.
func (s *Service) replay(ch platform.LiveChannel, first string) (Response, error) {
	s.metrics.inbound(ch.Kind, outcomeDuplicate)
	if first == "" {
		return Response{}, platform.Errorf(platform.CodeConflict, "this delivery is being answered; retry later for its reply")
	}
	var reply GenericReply
	if err := json.Unmarshal([]byte(first), &reply); err != nil {
		return Response{}, platform.Wrap(err, platform.CodeInternal, "replay delivery")
	}
	status := http.StatusOK
	if reply.Status == "accepted" {
		status = http.StatusAccepted
	}
	return Response{Status: status, Body: reply, Replayed: true}, nil
}

// stored says whether a failed send stored the user's text (a dialog was
// found or made and the turn got that far): if not, a retry may answer.
func stored(t dialog.Turn) bool { return len(t.Messages) > 0 }

func genericReply(t dialog.Turn, conversation string) GenericReply {
	out := GenericReply{DialogID: t.DialogID, ConversationID: conversation, Status: "answered", Text: replyText(t),
		Messages: []ReplyMessage{}}
	for _, m := range t.Messages {
		if m.Kind == string(agent.KindAssistant) {
			out.Messages = append(out.Messages, ReplyMessage{ID: m.ID, Text: m.Text, CreatedAt: m.CreatedAt})
		}
	}
	switch {
	case t.Error != nil:
		out.Status, out.Error = "error", &ReplyError{Code: t.Error.Code, Message: t.Error.Message}
	case t.Queued:
		out.Status = "queued"
	case t.Done == nil && len(out.Messages) == 0:
		out.Status = "handoff"
	}
	return out
}
