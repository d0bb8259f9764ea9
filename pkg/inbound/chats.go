package inbound

import (
	"context"
	"net/http"

	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/platform"
)

// The messaging platforms (Telegram, Slack) are acknowledged at once and
// answered in the background: Slack wants an answer within 3 s and
// retries otherwise, and neither reads a reply from the response.

// replier sends a reply into the platform conversation it was asked in.
type replier func(ctx context.Context, msg channel.Message, text string) error

// acknowledge takes msg's delivery and answers it in the background with
// send; a retry of a delivery taken before is acknowledged and dropped.
func (s *Service) acknowledge(ctx context.Context, ch platform.LiveChannel, msg channel.Message, send replier) (Response, error) {
	claimed, _, err := s.claim(ctx, ch, msg.DeliveryID)
	if err != nil {
		return Response{}, err
	}
	if !claimed {
		s.metrics.inbound(ch.Kind, outcomeDuplicate)
		return Response{Status: http.StatusOK}, nil
	}
	s.background(func(bg context.Context) {
		s.answerChat(bg, ch, msg, send)
	})
	s.metrics.inbound(ch.Kind, outcomeAccepted)
	return Response{Status: http.StatusOK}, nil
}

// answerChat answers msg and sends the reply; failures are logged by
// code and channel, never with a token, and counted.
func (s *Service) answerChat(ctx context.Context, ch platform.LiveChannel, msg channel.Message, send replier) {
	turn, err := s.send(ctx, ch, msg)
	if err != nil {
		if !stored(turn) {
			s.release(ctx, ch, msg.DeliveryID)
		}
		s.metrics.replyFailed(ch.Kind)
		s.log.WarnContext(ctx, "channels: answer failed", "tenant", ch.TenantID, "channel", ch.ID, "kind", ch.Kind,
			"code", platform.ErrorCode(err), "err", err)
		return
	}
	s.finish(ctx, ch, msg.DeliveryID, "")
	text := replyText(turn)
	if text == "" {
		return // queued into a running reply, handed off to a person, or stopped without words
	}
	if err := send(ctx, msg, text); err != nil {
		s.metrics.replyFailed(ch.Kind)
		s.log.WarnContext(ctx, "channels: reply not delivered", "tenant", ch.TenantID, "channel", ch.ID, "kind", ch.Kind,
			"dialog", turn.DialogID, "err", err)
	}
}

// fromTelegram handles a Telegram update: the secret token in its header,
// update_id its delivery id, the chat its conversation.
func (s *Service) fromTelegram(ctx context.Context, ch platform.LiveChannel, h http.Header, body []byte) (Response, error) {
	if !channel.VerifyTelegram(h, ch.Secret) {
		return Response{}, platform.Errorf(platform.CodeUnauthorized, "missing or wrong %s", channel.TelegramSecretHeader)
	}
	msg, ok, err := channel.ParseTelegram(body)
	if err != nil {
		return Response{}, invalid(err)
	}
	if !ok {
		s.metrics.inbound(ch.Kind, outcomeIgnored)
		return Response{Status: http.StatusOK}, nil
	}
	return s.acknowledge(ctx, ch, msg, func(ctx context.Context, msg channel.Message, text string) error {
		token, err := ch.RequireSecret(platform.ChannelBotToken)
		if err != nil {
			return err
		}
		return s.telegram.SendMessage(ctx, token, msg.Conversation, text)
	})
}

// fromSlack handles an Events API request: verified with the app's
// signing secret, the URL verification challenge answered, a person's
// message answered in its thread. event_id is the delivery id, so
// Slack's retries (X-Slack-Retry-Num) never answer twice.
func (s *Service) fromSlack(ctx context.Context, ch platform.LiveChannel, h http.Header, body []byte) (Response, error) {
	signing, err := ch.RequireSecret(platform.ChannelSigningSecret)
	if err != nil {
		return Response{}, platform.Wrap(err, platform.CodeInternal, "slack channel")
	}
	if err := channel.VerifySlack(signing, h, body, s.now()); err != nil {
		return Response{}, refused(err)
	}
	req, err := channel.ParseSlack(body)
	if err != nil {
		return Response{}, invalid(err)
	}
	if req.Type == channel.SlackURLVerification {
		s.metrics.inbound(ch.Kind, outcomeChallenge)
		return Response{Status: http.StatusOK, Body: map[string]string{"challenge": req.Challenge}}, nil
	}
	msg, ok := req.Message(ch.BotUserID)
	if !ok || msg.DeliveryID == "" {
		s.metrics.inbound(ch.Kind, outcomeIgnored)
		return Response{Status: http.StatusOK}, nil
	}
	return s.acknowledge(ctx, ch, msg, func(ctx context.Context, msg channel.Message, text string) error {
		token, err := ch.RequireSecret(platform.ChannelBotToken)
		if err != nil {
			return err
		}
		channelID, thread := channel.SplitSlackConversation(msg.Conversation)
		return s.slack.PostMessage(ctx, token, channelID, thread, text)
	})
}

// SetTelegramWebhook points a Telegram channel's bot at url (its inbound
// URL) with setWebhook, passing the channel's secret token, so Telegram
// sends updates that Parley accepts.
func (s *Service) SetTelegramWebhook(ctx context.Context, p *platform.Principal, tenant, id, url string) error {
	ch, err := s.opts.Platform.LiveChannel(ctx, p, tenant, id)
	if err != nil {
		return err
	}
	if ch.Kind != channel.KindTelegram {
		return platform.Errorf(platform.CodeInvalid, "only a telegram channel has a webhook to set")
	}
	token, err := ch.RequireSecret(platform.ChannelBotToken)
	if err != nil {
		return platform.Invalid(platform.Detail{Pointer: "/secrets/" + platform.ChannelBotToken, Message: err.Error()})
	}
	if err := s.telegram.SetWebhook(ctx, token, url, ch.Secret); err != nil {
		s.log.WarnContext(ctx, "channels: setWebhook failed", "tenant", ch.TenantID, "channel", ch.ID, "err", err)
		return platform.Wrap(err, platform.CodeInvalid, "Telegram refused setWebhook: %s", err.Error())
	}
	return nil
}
