package inbound

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/worker"
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
	// JobLease is how long a claimed channel job stays this process's
	// should it hang (a dead process's jobs are taken sooner: see Run);
	// default 10 minutes. JobPoll is how often an idle worker looks for
	// jobs queued by other processes; default a second.
	JobLease time.Duration
	JobPoll  time.Duration
	// RetrySchedule is the wait before each retry of a job that failed
	// for now; past its end the job is given up. Default: 1 s, 5 s,
	// 30 s, 2 min, 10 min, 30 min, 1 h, 2 h.
	RetrySchedule []time.Duration
	// OwnsDatabase says no other process works on this database's jobs (a
	// server holding the SQLite data dir): what is claimed at start was
	// claimed by this process before it died, and is due again at once.
	OwnsDatabase bool
}

// Service receives channel messages. It is safe for concurrent use.
type Service struct {
	opts     Options
	log      *slog.Logger
	telegram channel.Telegram
	slack    channel.Slack
	metrics  *metrics
	now      func() time.Time
	// jobs run under base until Shutdown cancels it.
	base   context.Context
	cancel context.CancelFunc
	// jobs works the channel job queue (jobs.go); lease is how long a
	// claimed job stays this process's, wake cuts the pool's poll short,
	// schedule is Options.RetrySchedule.
	jobs     *worker.Pool[store.ChannelJob]
	lease    time.Duration
	wake     chan struct{}
	schedule []time.Duration
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
	s.lease, s.wake = cmp.Or(opts.JobLease, defaultJobLease), make(chan struct{}, 1)
	if s.schedule = opts.RetrySchedule; len(s.schedule) == 0 {
		s.schedule = retrySchedule
	}
	s.jobs = &worker.Pool[store.ChannelJob]{
		Claim: func(ctx context.Context, n int, skip []string) ([]store.ChannelJob, error) {
			return s.opts.Store.ChannelJobs().Claim(ctx, s.opts.Store.Instance()+"/"+store.NewID("clm"), s.lease, n, skip)
		},
		Key:         func(j store.ChannelJob) string { return j.ID },
		Work:        s.work,
		ClaimFailed: func(err error) { s.log.Error("channels: claim jobs", "err", err) },
		Poll:        cmp.Or(opts.JobPoll, defaultJobPoll),
		Wake:        s.wake,
		Concurrency: defaultJobConcurrency,
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
	ch, err := s.opts.Platform.Channels().LiveByID(ctx, channelID)
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

// maxDeliveryID is the longest delivery id the store keeps (its column's
// size, which PostgreSQL enforces and SQLite does not).
const maxDeliveryID = 255

// checkDeliveryID refuses a platform's delivery id that no database can
// hold alike: too long, not UTF-8, or with NUL. Signed or not, it is the
// sender's mistake, a 4xx at pointer, not a 500 the sender retries.
func checkDeliveryID(pointer, id string) error {
	if len(id) > maxDeliveryID || !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0 {
		return platform.Invalid(platform.Detail{Pointer: pointer,
			Message: fmt.Sprintf("must be UTF-8 text of at most %d bytes without NUL", maxDeliveryID)})
	}
	return nil
}

// claim takes a platform's delivery: false means it was taken before (a
// retry), and first is that earlier record.
func (s *Service) claim(ctx context.Context, ch platform.LiveChannel, deliveryID string) (bool, *store.ChannelDelivery, error) {
	ok, first, err := s.opts.Store.Tenant(ch.TenantID).Channels().ClaimDelivery(ctx, ch.ID, deliveryID)
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
	if err := s.opts.Store.Tenant(ch.TenantID).Channels().FinishDelivery(context.WithoutCancel(ctx), ch.ID, deliveryID, response); err != nil {
		s.log.ErrorContext(ctx, "channels: record delivery answered", "tenant", ch.TenantID, "channel", ch.ID, "err", err)
	}
}

// release forgets a delivery that was refused before its text was stored
// (rate limited, say), so the platform's retry is answered.
func (s *Service) release(ctx context.Context, ch platform.LiveChannel, deliveryID string) {
	if err := s.opts.Store.Tenant(ch.TenantID).Channels().ReleaseDelivery(context.WithoutCancel(ctx), ch.ID, deliveryID); err != nil {
		s.log.ErrorContext(ctx, "channels: release delivery", "tenant", ch.TenantID, "channel", ch.ID, "err", err)
	}
}
