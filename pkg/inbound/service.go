package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// Options are the Service's collaborators; all but the API base URLs and
// Clock are required.
type Options struct {
	Platform *platform.Service
	Runtime  *dialog.Runtime
	Store    *store.Store
	// Client sends replies and setWebhook calls: pkg/outbound's client,
	// since the API base URLs are the operator's to change.
	Client *http.Client
	// TelegramAPI and SlackAPI are the platforms' API base URLs; empty
	// means channel.DefaultTelegramAPI and channel.DefaultSlackAPI.
	TelegramAPI string
	SlackAPI    string
	Logger      *slog.Logger
	Metrics     prometheus.Registerer
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
}

// Service receives channel messages. It is safe for concurrent use.
type Service struct {
	opts     Options
	log      *slog.Logger
	telegram channel.Telegram
	slack    channel.Slack
	metrics  *metrics
	now      func() time.Time
	// background answers run under base until Shutdown cancels it.
	base   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Service, or an error naming a missing option.
func New(opts Options) (*Service, error) {
	var missing []string
	if opts.Platform == nil {
		missing = append(missing, "Platform")
	}
	if opts.Runtime == nil {
		missing = append(missing, "Runtime")
	}
	if opts.Store == nil {
		missing = append(missing, "Store")
	}
	if opts.Client == nil {
		missing = append(missing, "Client")
	}
	if opts.Logger == nil {
		missing = append(missing, "Logger")
	}
	if opts.Metrics == nil {
		missing = append(missing, "Metrics")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("inbound: Options.%s required", strings.Join(missing, ", Options."))
	}
	m, err := newMetrics(opts.Metrics)
	if err != nil {
		return nil, err
	}
	s := &Service{opts: opts, log: opts.Logger, metrics: m, now: opts.Clock,
		telegram: channel.Telegram{BaseURL: or(opts.TelegramAPI, channel.DefaultTelegramAPI), Client: opts.Client},
		slack:    channel.Slack{BaseURL: or(opts.SlackAPI, channel.DefaultSlackAPI), Client: opts.Client}}
	if s.now == nil {
		s.now = time.Now
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Response is what to answer the platform: a status and a JSON body (nil
// for none).
type Response struct {
	Status int
	Body   any
	// Replayed says the body answered an earlier delivery with this id.
	Replayed bool
}

// Receive handles one request to a channel's inbound route. Its errors
// are *platform.Error: unknown or disabled channels are not_found, a bad
// signature unauthorized, a malformed body invalid.
func (s *Service) Receive(ctx context.Context, channelID string, h http.Header, body []byte) (Response, error) {
	ch, err := s.opts.Platform.LiveChannelByID(ctx, channelID)
	if err != nil {
		return Response{}, err
	}
	var resp Response
	switch ch.Kind {
	case channel.KindWebhook:
		resp, err = s.generic(ctx, ch, h, body)
	case channel.KindTelegram:
		resp, err = s.fromTelegram(ctx, ch, h, body)
	case channel.KindSlack:
		resp, err = s.fromSlack(ctx, ch, h, body)
	default:
		err = platform.ErrNoChannel
	}
	if err != nil {
		s.metrics.inbound(ch.Kind, outcomeOf(err))
	}
	return resp, err
}

// Idle waits until the answers running in the background are done, or
// ctx ends.
func (s *Service) Idle(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("inbound: channel answers still going: %w", ctx.Err())
	}
}

// Shutdown waits for the background answers (Idle), then cancels what is
// left. Call it with the dialog runtime's Shutdown, which cuts their runs.
func (s *Service) Shutdown(ctx context.Context) error {
	defer s.cancel()
	return s.Idle(ctx)
}

// background runs answer after the platform was acknowledged.
func (s *Service) background(answer func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		answer(s.base)
	}()
}

// refused is the answer to a request that fails its channel's signature
// check; the reason is for the sender, never a secret.
func refused(reason error) error {
	return platform.Wrap(reason, platform.CodeUnauthorized, "signature refused: %s", reason.Error())
}

// invalid is the answer to a body its platform would not send: a
// *channel.FieldError keeps its pointer.
func invalid(err error) error {
	var fe *channel.FieldError
	if errors.As(err, &fe) {
		return platform.Invalid(platform.Detail{Pointer: fe.Pointer, Message: fe.Message})
	}
	return platform.Invalid(platform.Detail{Message: err.Error()})
}

// claim takes a platform's delivery: false means it was taken before (a
// retry), and first is that earlier record.
func (s *Service) claim(ctx context.Context, ch platform.LiveChannel, deliveryID string) (bool, *store.ChannelDelivery, error) {
	ok, first, err := s.opts.Store.ClaimChannelDelivery(ctx, ch.TenantID, ch.ID, deliveryID)
	if errors.Is(err, store.ErrConflict) {
		return false, nil, platform.Errorf(platform.CodeConflict, "this delivery is being retried already; try again")
	}
	if err != nil {
		return false, nil, platform.Wrap(err, platform.CodeInternal, "claim delivery")
	}
	return ok, first, nil
}

// finish records the delivery answered; a failure to record is logged
// (the answer went out; a retry would only find the claim).
func (s *Service) finish(ctx context.Context, ch platform.LiveChannel, deliveryID, response string) {
	if err := s.opts.Store.FinishChannelDelivery(context.WithoutCancel(ctx), ch.TenantID, ch.ID, deliveryID, response); err != nil {
		s.log.ErrorContext(ctx, "channels: record delivery answered", "tenant", ch.TenantID, "channel", ch.ID, "err", err)
	}
}

// release forgets a delivery that was refused before its text was stored
// (rate limited, say), so the platform's retry is answered.
func (s *Service) release(ctx context.Context, ch platform.LiveChannel, deliveryID string) {
	if err := s.opts.Store.ReleaseChannelDelivery(context.WithoutCancel(ctx), ch.TenantID, ch.ID, deliveryID); err != nil {
		s.log.ErrorContext(ctx, "channels: release delivery", "tenant", ch.TenantID, "channel", ch.ID, "err", err)
	}
}
