package inbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// The messaging platforms (Telegram, Slack) are acknowledged at once and
// answered from the channel job queue (jobs.go): Slack wants an answer
// within 3 s and retries otherwise, and neither reads a reply from the
// response. The message is queued in the commit that records its
// delivery id, before the acknowledgement, so no crash loses it.

// acknowledge records msg's delivery and queues its answer; a retry of a
// delivery recorded before is acknowledged and dropped.
func (s *Service) acknowledge(ctx context.Context, ch platform.LiveChannel, msg channel.Message) (Response, error) {
	d := store.ChannelDelivery{TenantID: ch.TenantID, ChannelID: ch.ID, DeliveryID: msg.DeliveryID, Status: store.ChannelDeliveryDone}
	claimed, _, err := s.queue(ctx, ch, d, msg)
	if err != nil {
		return Response{}, err
	}
	if !claimed {
		s.metrics.inbound(ch.Kind, outcomeDuplicate)
		return Response{Status: http.StatusOK}, nil
	}
	s.metrics.inbound(ch.Kind, outcomeAccepted)
	return Response{Status: http.StatusOK}, nil
}

// fromTelegram handles a Telegram update: the secret token in its header,
// update_id its delivery id, the chat its conversation.
func (s *Service) fromTelegram(ctx context.Context, ch platform.LiveChannel, h http.Header, body []byte) (Response, error) {
	if !channel.VerifyTelegram(h, ch.Secret) && (ch.PrevSecret == "" || !channel.VerifyTelegram(h, ch.PrevSecret)) {
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
	return s.acknowledge(ctx, ch, msg)
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
		// During a rotation's overlap Slack may still sign with the
		// previous secret.
		if ch.PrevSecret == "" || channel.VerifySlack(ch.PrevSecret, h, body, s.now()) != nil {
			return Response{}, refused(err)
		}
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
	if err := checkDeliveryID("/event_id", msg.DeliveryID); err != nil {
		return Response{}, err
	}
	switch {
	case len(msg.User) > channel.MaxExternalID:
		return Response{}, invalid(&channel.FieldError{Pointer: "/event/user", Message: fmt.Sprintf("must be at most %d bytes", channel.MaxExternalID)})
	case len(msg.Conversation) > maxDeliveryID:
		return Response{}, invalid(&channel.FieldError{Pointer: "/event/channel", Message: "with the thread's ts, must be at most 255 bytes"})
	}
	return s.acknowledge(ctx, ch, msg)
}

// RotateChannelSecret rotates a channel's secret (platform.Service's
// RotateChannelSecret); a Telegram channel's new secret token is then
// registered with setWebhook at url, its inbound URL. Should Telegram
// refuse, the rotation stands and the old token is still accepted for the
// overlap: the error says to set the webhook again.
func (s *Service) RotateChannelSecret(ctx context.Context, p *platform.Principal, tenant, id, secret, url string) (platform.CreatedChannel, error) {
	rotated, err := s.opts.Platform.Channels().RotateSecret(ctx, p, tenant, id, secret)
	if err != nil || rotated.Kind != channel.KindTelegram {
		return rotated, err
	}
	if err := s.SetTelegramWebhook(ctx, p, tenant, rotated.ID, url); err != nil {
		why := err.Error()
		var pe *platform.Error
		if errors.As(err, &pe) {
			why = pe.Message
		}
		return platform.CreatedChannel{}, platform.Wrap(err, platform.CodeInvalid,
			"the secret token was rotated, but: %s; the previous token is accepted for now: set the webhook again", why)
	}
	return rotated, nil
}

// SetTelegramWebhook points a Telegram channel's bot at url (its inbound
// URL) with setWebhook, passing the channel's secret token, so Telegram
// sends updates that Parley accepts.
func (s *Service) SetTelegramWebhook(ctx context.Context, p *platform.Principal, tenant, id, url string) error {
	ch, err := s.opts.Platform.Channels().Live(ctx, p, tenant, id)
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
