package inbound

import (
	"context"
	"errors"
	"strings"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// dialogFor returns the dialog that answers a platform conversation:
// the one mapped to it, or a new one with the channel's bot when there is
// none yet or the mapped one was closed.
func (s *Service) dialogFor(ctx context.Context, ch platform.LiveChannel, msg channel.Message) (string, error) {
	t := s.opts.Store.Tenant(ch.TenantID)
	for range 2 { // a second pass reads the mapping a concurrent first message made
		conv, err := t.Channels().Conversation(ctx, ch.ID, msg.Conversation)
		replaced := ""
		switch {
		case err == nil:
			d, err := t.Dialogs().Get(ctx, conv.DialogID)
			if err == nil && d.Status != store.DialogClosed {
				return d.ID, nil
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return "", platform.Wrap(err, platform.CodeInternal, "channel dialog")
			}
			replaced = conv.DialogID // closed or erased: the conversation starts a new dialog
		case !errors.Is(err, store.ErrNotFound):
			return "", platform.Wrap(err, platform.CodeInternal, "channel conversation")
		}
		d, err := s.opts.Runtime.Dialogs().Create(ctx, platform.ChannelPrincipal(ch), ch.Tenant, ch.BotID,
			dialog.CreateDialogInput{UserID: msg.User, Channel: ch.Kind})
		if err != nil {
			return "", err
		}
		err = t.Channels().MapConversation(ctx, &store.ChannelConversation{TenantID: ch.TenantID, ChannelID: ch.ID,
			ExternalID: msg.Conversation, UserID: msg.User, DialogID: d.ID}, replaced)
		if err == nil {
			return d.ID, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return "", platform.Wrap(err, platform.CodeInternal, "map channel conversation")
		}
		// Another request mapped the conversation first; the dialog made
		// here stays unused and empty.
	}
	return "", platform.Errorf(platform.CodeConflict, "the conversation is being started by another request; retry")
}

// send answers msg in its conversation's dialog and returns the turn;
// messageID, when set, is the id msg's text is stored under (a queued
// answer's, so running it again never stores the text twice).
func (s *Service) send(ctx context.Context, ch platform.LiveChannel, msg channel.Message, messageID string) (dialog.Turn, error) {
	dialogID, err := s.dialogFor(ctx, ch, msg)
	if err != nil {
		return dialog.Turn{}, err
	}
	turn, err := s.opts.Runtime.SendMessage(ctx, platform.ChannelPrincipal(ch), ch.Tenant, dialogID, dialog.SendInput{Text: msg.Text, MessageID: messageID}, nil)
	if err != nil {
		return dialog.Turn{DialogID: dialogID}, err
	}
	return turn, nil
}

// replyText is what the bot said in a turn: its assistant messages'
// texts, in order.
func replyText(t dialog.Turn) string {
	var parts []string
	for _, m := range t.Messages {
		if m.Kind == string(agent.KindAssistant) && strings.TrimSpace(m.Text) != "" {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
