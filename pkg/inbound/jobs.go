package inbound

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// The channel job queue (store.ChannelJob): what is owed to a channel's
// platform is a row until it is done. An acknowledged Telegram or Slack
// message, or an async webhook-channel message, is an answer job, queued
// in the commit that records its delivery id; answering it turns it into
// a send job holding the reply, and an operator's message in a channel's
// dialog is a send job queued with the message. Run claims due jobs for a
// lease, on as many servers as share the database, so each is worked on
// by one of them at a time; a server that dies leaves its jobs to the
// next claim (at its restart on SQLite, at once on PostgreSQL, whose
// instance locks tell the dead).

// Defaults of the job worker.
const (
	defaultJobLease       = 10 * time.Minute
	defaultJobPoll        = time.Second
	defaultJobConcurrency = 8
)

// retrySchedule is Options.RetrySchedule's default: the wait before each
// retry of a job that failed for now (a busy dialog, a rate limit, a
// platform that is down); past its end the job is given up.
var retrySchedule = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour}

// queue records a platform's delivery d and queues msg's answer in one
// commit; claimed is false for a delivery recorded before (first).
func (s *Service) queue(ctx context.Context, ch platform.LiveChannel, d store.ChannelDelivery, msg channel.Message) (bool, *store.ChannelDelivery, error) {
	job := &store.ChannelJob{TenantID: ch.TenantID, ChannelID: ch.ID, Kind: store.ChannelJobAnswer, DeliveryID: msg.DeliveryID,
		Conversation: msg.Conversation, UserID: msg.User, MessageID: store.NewID(store.PrefixMessage), Text: msg.Text}
	claimed, first, err := s.opts.Store.Tenant(d.TenantID).Channels().QueueDelivery(ctx, d, job)
	if errors.Is(err, store.ErrConflict) {
		return false, nil, platform.Errorf(platform.CodeConflict, "this delivery is being retried already; try again")
	}
	if err != nil {
		return false, nil, platform.Wrap(err, platform.CodeInternal, "queue delivery")
	}
	if claimed {
		s.Wake()
	}
	return claimed, first, nil
}

// Wake tells the worker a job was queued, so it claims at once instead
// of at its next poll.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run works the channel job queue until ctx ends; the jobs in flight then
// finish under the Service's own context (Shutdown waits for them). Run it
// once per process.
func (s *Service) Run(ctx context.Context) {
	if s.opts.OwnsDatabase {
		if n, err := s.opts.Store.ChannelJobs().ReleaseClaims(ctx, time.Now().UTC()); err != nil {
			s.log.Error("channels: cannot release the claims of the last run", "err", err)
		} else if n > 0 {
			s.log.Info("channels: answers and replies in flight when the server stopped are due again", "count", n)
		}
	}
	s.jobs.Run(ctx)
}

// work does one claimed job: answers it (an answer job) and sends what
// is to send. runCtx is Run's: once it ended, the server is stopping, and
// an answer cut short is left for the next run rather than given up.
func (s *Service) work(runCtx context.Context, j store.ChannelJob) {
	ctx := s.base
	ch, err := s.opts.Platform.Channels().LiveByID(ctx, j.ChannelID)
	if errors.Is(err, platform.ErrNoChannel) {
		s.giveUp(ctx, &j, "", errors.New("the channel was deleted or disabled"))
		return
	}
	if err != nil {
		s.retry(ctx, &j, "", err)
		return
	}
	if j.Kind == store.ChannelJobAnswer {
		msg := channel.Message{DeliveryID: j.DeliveryID, Conversation: j.Conversation, User: j.UserID, Text: j.Text}
		turn, err := s.send(ctx, ch, msg, j.MessageID)
		switch {
		case runCtx.Err() != nil && (err != nil || turn.Error != nil):
			s.retryAt(ctx, &j, time.Now(), "cut short by a shutdown")
			return
		case err != nil && answerRetryable(err):
			s.retry(ctx, &j, ch.Kind, err)
			return
		case err != nil:
			s.giveUp(ctx, &j, ch.Kind, err)
			return
		}
		text := replyText(turn)
		if text == "" || ch.Kind == channel.KindWebhook {
			// queued into a running reply, handed off to a person, stopped
			// without words, or (a webhook channel) announced as
			// message.created already
			s.finishJob(ctx, &j)
			return
		}
		if err := s.opts.Store.ChannelJobs().Answered(ctx, &j, turn.DialogID, text); err != nil {
			s.log.ErrorContext(ctx, "channels: record answer", "tenant", j.TenantID, "channel", j.ChannelID, "err", err)
			return // the claim lapsed: whoever holds it now answers
		}
	}
	if err := s.deliver(ctx, ch, j.Conversation, j.Text); err != nil {
		if sendRetryable(err) {
			s.retry(ctx, &j, ch.Kind, err)
		} else {
			s.giveUp(ctx, &j, ch.Kind, err)
		}
		return
	}
	s.finishJob(ctx, &j)
}

// deliver sends text into a conversation of ch's platform. A webhook
// channel's messages reach the tenant as message.created instead.
func (s *Service) deliver(ctx context.Context, ch platform.LiveChannel, conversation, text string) error {
	if ch.Kind == channel.KindWebhook {
		return nil
	}
	token, err := ch.RequireSecret(platform.ChannelBotToken)
	if err != nil {
		return errNoToken{err}
	}
	if ch.Kind == channel.KindTelegram {
		return s.telegram.SendMessage(ctx, token, conversation, text)
	}
	channelID, thread := channel.SplitSlackConversation(conversation)
	return s.slack.PostMessage(ctx, token, channelID, thread, text)
}

// errNoToken is a channel whose bot token secret is not set: nothing can
// be sent until it is, and a retry would not change that.
type errNoToken struct{ error }

// sendRetryable says whether a failed send may succeed later: the
// platform was unreachable, throttled or failing; not when it refused the
// request (a bad token, a chat the bot left).
func sendRetryable(err error) bool {
	var api *channel.APIError
	if errors.As(err, &api) {
		return api.Status == http.StatusTooManyRequests || api.Status >= 500 || api.Description == "ratelimited"
	}
	var noToken errNoToken
	return !errors.As(err, &noToken)
}

// answerRetryable says whether an answer refused now may be taken later:
// a busy dialog, a rate limit, a fault of ours; not an invalid request, a
// bot that is gone or a channel that may not chat.
func answerRetryable(err error) bool {
	switch platform.ErrorCode(err) {
	case platform.CodeInvalid, platform.CodeNotFound, platform.CodeUnauthorized, platform.CodeForbidden:
		return false
	}
	return true
}

func (s *Service) finishJob(ctx context.Context, j *store.ChannelJob) {
	if err := s.opts.Store.ChannelJobs().Finish(ctx, j); err != nil {
		s.log.ErrorContext(ctx, "channels: finish job", "tenant", j.TenantID, "channel", j.ChannelID, "err", err)
	}
}

// retry leaves the job for a later attempt, or gives it up when the
// schedule is over.
func (s *Service) retry(ctx context.Context, j *store.ChannelJob, kind string, err error) {
	if j.Attempts > len(s.schedule) {
		s.giveUp(ctx, j, kind, err)
		return
	}
	if kind != "" {
		s.metrics.retried(kind)
	}
	s.log.InfoContext(ctx, "channels: will retry", "tenant", j.TenantID, "channel", j.ChannelID, "job", j.Kind,
		"attempt", j.Attempts, "code", platform.ErrorCode(err), "err", err)
	s.retryAt(ctx, j, time.Now().Add(s.schedule[max(j.Attempts, 1)-1]), err.Error())
}

func (s *Service) retryAt(ctx context.Context, j *store.ChannelJob, at time.Time, why string) {
	if err := s.opts.Store.ChannelJobs().Retry(context.WithoutCancel(ctx), j, at.UTC(), why); err != nil {
		s.log.ErrorContext(ctx, "channels: reschedule job", "tenant", j.TenantID, "channel", j.ChannelID, "err", err)
	}
}

// giveUp drops a job that cannot be done, logged and counted: never a
// token (the platforms' errors name none, nor the request URL).
func (s *Service) giveUp(ctx context.Context, j *store.ChannelJob, kind string, err error) {
	if kind != "" {
		s.metrics.replyFailed(kind)
	}
	what := "channels: reply not delivered"
	if j.Kind == store.ChannelJobAnswer {
		what = "channels: answer failed"
	}
	s.log.WarnContext(ctx, what, "tenant", j.TenantID, "channel", j.ChannelID, "kind", kind, "dialog", j.DialogID,
		"attempts", j.Attempts, "code", platform.ErrorCode(err), "err", err)
	s.finishJob(ctx, j)
}

// Idle waits until no job is due or in flight, or ctx ends: for tests,
// which settle what their requests queued before looking.
func (s *Service) Idle(ctx context.Context) error {
	for {
		// Due first: a job claimed after the count is in the pool's
		// claim or in flight by the time Busy looks; read the other way
		// round, a claim between the two would be seen by neither.
		due, err := s.opts.Store.ChannelJobs().Due(ctx)
		busy := s.jobs.Busy()
		if err == nil && !busy && due == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("inbound: channel jobs still going"), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Shutdown waits for the jobs in flight (Run's context having ended; the
// dialog runtime's Shutdown cuts their runs), then cancels what is left.
func (s *Service) Shutdown(ctx context.Context) error {
	defer s.cancel()
	done := make(chan struct{})
	go func() { s.jobs.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("inbound: channel jobs still going"), ctx.Err())
	}
}
