package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
	"github.com/parleyhq/parley/pkg/worker"
	"github.com/prometheus/client_golang/prometheus"
)

// DelivererOptions tune the webhook deliverer. Client is required; the
// rest have defaults.
type DelivererOptions struct {
	// Client sends the webhooks: an outbound client, as every URL is a
	// tenant's.
	Client *http.Client
	// Schedule is the delay before each attempt; default webhook.Schedule.
	Schedule []time.Duration
	// Timeout bounds one attempt; default webhook.Timeout (15 s).
	Timeout time.Duration
	// Lease is how long a claimed delivery stays this process's: past it,
	// another process (or this one, restarted) tries again. Default the
	// timeout plus 45 s.
	Lease time.Duration
	// Poll is how often an idle deliverer looks for due deliveries written
	// by other processes; default a second. Its own are sent at once.
	Poll time.Duration
	// Concurrency bounds attempts in flight; default 16.
	Concurrency int
	// Metrics, when set, receives the delivery metrics.
	Metrics prometheus.Registerer
	// Retention is how long the outbox keeps an event whose deliveries are
	// settled, with its delivery log; default 30 days.
	Retention time.Duration
	// OwnsDatabase says no other process delivers from this database (a
	// server holding the SQLite data dir): what is claimed at start was
	// claimed by this process before it died, and is due again at once.
	OwnsDatabase bool
	// Now is the deliverer's clock: when a delivery is due, when its
	// retry is, and the time its signature carries. Default the wall
	// clock, which stamps the outbox rows; not the Service's, which tests
	// may set for other reasons.
	Now func() time.Time
}

// Deliverer sends the outbox's webhooks: it claims due deliveries, signs
// and posts them, and records each attempt, on as many processes as run
// it. A delivery is claimed by one of them at a time, so each event goes
// out once per endpoint; only a process that dies after a receiver
// answered and before the answer was recorded sends it again, with the
// same webhook-id, which is how a receiver recognises it.
type Deliverer struct {
	svc     *Service
	opts    DelivererOptions
	metrics *webhookMetrics
}

// NewDeliverer returns the deliverer of s's outbox.
func (w Webhooks) NewDeliverer(opts DelivererOptions) (*Deliverer, error) {
	s := w.svc
	if opts.Client == nil {
		return nil, errors.New("platform: the webhook deliverer needs an outbound HTTP client")
	}
	if len(opts.Schedule) == 0 {
		opts.Schedule = webhook.Schedule
	}
	if opts.Timeout <= 0 {
		opts.Timeout = webhook.Timeout
	}
	if opts.Lease <= 0 {
		opts.Lease = opts.Timeout + 45*time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	if opts.Retention <= 0 {
		opts.Retention = 30 * 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Deliverer{svc: s, opts: opts, metrics: newWebhookMetrics(opts.Metrics)}, nil
}

// Run delivers until ctx ends, then waits for the attempts in flight.
func (d *Deliverer) Run(ctx context.Context) {
	if d.opts.OwnsDatabase {
		if n, err := d.outbox().ReleaseClaims(ctx, d.now()); err != nil {
			d.svc.log.Error("webhooks: cannot release the claims of the last run", "err", err)
		} else if n > 0 {
			d.svc.log.Info("webhooks: deliveries in flight when the server stopped are due again", "count", n)
		}
	}
	pool := &worker.Pool[store.Claimed]{
		Claim:       d.claim,
		Key:         func(c store.Claimed) string { return c.Delivery.ID },
		Work:        d.deliver,
		ClaimFailed: func(err error) { d.svc.log.Error("webhooks: claim deliveries", "err", err) },
		Poll:        d.opts.Poll,
		Wake:        d.svc.wake, // an event of this process is sent at once
		Concurrency: d.opts.Concurrency,
	}
	var pruning sync.WaitGroup
	pruning.Go(func() { d.prune(ctx) })
	pool.Run(ctx)
	pool.Wait()
	pruning.Wait()
}

// pruneEvery is how often the deliverer deletes outbox rows past their
// retention, in batches of pruneBatch so no statement runs long.
const (
	pruneEvery = time.Hour
	pruneBatch = 1000
)

// prune deletes settled events past the retention, hourly, until ctx ends.
// Every process does it; they delete the same rows at worst.
func (d *Deliverer) prune(ctx context.Context) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		for {
			n, err := d.outbox().Prune(ctx, d.now().Add(-d.opts.Retention), pruneBatch)
			if err != nil && ctx.Err() == nil {
				d.svc.log.Error("webhooks: prune the outbox", "err", err)
			}
			if err != nil || n < pruneBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// now reads the deliverer's clock, in UTC as the store keeps times.
func (d *Deliverer) now() time.Time { return d.opts.Now().UTC() }

// outbox is the store's outbox on the deliverer's clock.
func (d *Deliverer) outbox() store.Outbox { return d.svc.store.Outbox().WithClock(d.opts.Now) }

func (d *Deliverer) claim(ctx context.Context, n int, skip []string) ([]store.Claimed, error) {
	claimed, err := d.outbox().Claim(ctx, store.NewID("clm"), d.opts.Lease, n, skip)
	for _, c := range claimed {
		d.metrics.lag.Observe(max(0, c.Delivery.UpdatedAt.Sub(c.DueAt).Seconds()))
	}
	return claimed, err
}

// deliver makes one attempt of a claimed delivery and records it.
func (d *Deliverer) deliver(ctx context.Context, c store.Claimed) {
	del, ep := c.Delivery, c.Endpoint
	f := store.Finish{TenantID: del.TenantID, DeliveryID: del.ID, EndpointID: ep.ID, Claim: del.Claim}
	keys, err := d.keys(ep)
	switch {
	case ep.ID == "":
		return // the endpoint was deleted with its deliveries
	case !ep.Enabled:
		f.Status, f.LastError = store.DeliveryFailed, "not sent: the endpoint is disabled"
		d.metrics.outcome("not_sent")
	case err != nil:
		d.svc.log.Error("webhooks: cannot open an endpoint's secret", "webhook", ep.ID, "err", err)
		f.Status, f.LastError = store.DeliveryPending, "not sent: the endpoint's secret cannot be read; the operator was told"
		f.NextAttemptAt = d.now().Add(d.opts.Lease)
	default:
		res := webhook.Send(ctx, d.opts.Client, webhook.Message{ID: del.EventID, URL: ep.URL, Body: []byte(c.Body), Keys: keys},
			d.opts.Timeout, d.now)
		if ctx.Err() != nil && res.Status == 0 {
			// Shutting down cut the attempt short before an answer came.
			// The claim lapses (or is released at the next start on
			// SQLite) and the delivery is tried again.
			return
		}
		d.metrics.duration.Observe(res.Duration.Seconds())
		d.judge(&f, c, res)
	}
	if err := d.record(ctx, f, c.Delivery.NextAttemptAt); err != nil {
		return
	}
	if f.Disable != "" || f.DisableIfFailing != "" {
		d.svc.hooks.drop(del.TenantID)
	}
}

// recordRetry is how long record waits between tries.
const recordRetry = 250 * time.Millisecond

// record writes an attempt's outcome, trying again until the claim's lease
// ends (until): an answered attempt that goes unrecorded is sent again
// once the claim lapses. It writes even while shutting down, for the same
// reason.
func (d *Deliverer) record(ctx context.Context, f store.Finish, until time.Time) error {
	wctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), until)
	defer cancel()
	for {
		err := d.outbox().Finish(wctx, f)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, store.ErrConflict):
			d.svc.log.Warn("webhooks: a delivery's claim lapsed before its attempt was recorded; another attempt follows",
				"delivery", f.DeliveryID, "lease", d.opts.Lease.String())
			return err
		case wctx.Err() != nil:
			d.svc.log.Error("webhooks: record delivery attempt; it will be made again", "delivery", f.DeliveryID, "err", err)
			return err
		}
		d.svc.log.Warn("webhooks: record delivery attempt; trying again", "delivery", f.DeliveryID, "err", err)
		select {
		case <-wctx.Done():
		case <-time.After(recordRetry):
		}
	}
}

// judge decides what an attempt's result means for the delivery and the
// endpoint.
func (d *Deliverer) judge(f *store.Finish, c store.Claimed, res webhook.Result) {
	at := d.now()
	del := c.Delivery
	f.Attempt = &store.WebhookAttempt{Number: del.Attempts, Status: res.Status, DurationMS: res.Duration.Milliseconds(),
		Excerpt: res.Excerpt, Error: res.Error}
	switch res.Outcome {
	case webhook.Delivered:
		f.Status, f.Succeeded = store.DeliverySucceeded, true
		d.metrics.outcome("delivered")
		return
	case webhook.Gone:
		f.Status, f.LastError = store.DeliveryFailed, "the endpoint answered 410 Gone"
		f.Disable = fmt.Sprintf("the endpoint answered 410 Gone at %s; enable it again when it takes webhooks", at.Format(time.RFC3339))
		d.metrics.outcome("gone")
		return
	}
	f.LastError = res.Error
	if f.LastError == "" {
		f.LastError = fmt.Sprintf("the endpoint answered %d", res.Status)
	}
	if wait, ok := webhook.NextDelay(d.opts.Schedule, del.Attempts, res.RetryAfter); ok {
		f.Status, f.NextAttemptAt = store.DeliveryPending, at.Add(wait)
		d.metrics.outcome("retry")
		return
	}
	f.Status = store.DeliveryFailed
	d.metrics.outcome("failed")
	// Nothing taken since this delivery's first attempt, over the whole
	// schedule: the endpoint is not taking webhooks at all.
	f.DisableIfFailing = fmt.Sprintf("every attempt failed: delivery %s gave up after %d attempts on %s, and no other delivery "+
		"succeeded meanwhile (last: %s); enable the endpoint again when it takes webhooks", del.ID, del.Attempts, at.Format(time.RFC3339), f.LastError)
}

// keys returns the keys that sign for the endpoint: its secret, and the
// previous one during a rotation's overlap.
func (d *Deliverer) keys(ep store.WebhookEndpoint) ([][]byte, error) {
	if ep.ID == "" {
		return nil, nil
	}
	key, err := d.svc.Webhooks().openWebhookSecret(ep.TenantID, ep.ID, ep.SecretNonce, ep.SecretCipher)
	if err != nil {
		return nil, err
	}
	keys := [][]byte{key}
	if ep.PrevExpiresAt != nil && ep.PrevExpiresAt.After(d.now()) {
		prev, err := d.svc.Webhooks().openWebhookSecret(ep.TenantID, ep.ID, ep.PrevNonce, ep.PrevCipher)
		if err != nil {
			return nil, err
		}
		keys = append(keys, prev)
	}
	return keys, nil
}

// webhookMetrics are the deliverer's Prometheus metrics, with bounded
// labels (the outcome only: never a tenant or a URL).
type webhookMetrics struct {
	deliveries *prometheus.CounterVec
	duration   prometheus.Histogram
	lag        prometheus.Histogram
}

func newWebhookMetrics(reg prometheus.Registerer) *webhookMetrics {
	m := &webhookMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: delivered, retry, failed (schedule spent), gone (410), not_sent (endpoint disabled)."},
			[]string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parley_webhook_attempt_duration_seconds",
			Help: "How long one webhook attempt took, to the receiver's answer or the timeout.", Buckets: prometheus.DefBuckets}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parley_webhook_queue_lag_seconds",
			Help:    "How late a webhook attempt started after it fell due (the outbox queue's lag).",
			Buckets: []float64{.01, .05, .1, .5, 1, 2, 5, 15, 60, 300}}),
	}
	if reg != nil {
		reg.MustRegister(m.deliveries, m.duration, m.lag)
	}
	return m
}

func (m *webhookMetrics) outcome(o string) { m.deliveries.WithLabelValues(o).Inc() }
