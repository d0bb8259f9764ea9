package inbound

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/platform"
)

// Outcomes of an inbound request, the label of parley_channel_messages_total.
const (
	outcomeAnswered   = "answered"  // answered in the response (webhook, sync)
	outcomeAccepted   = "accepted"  // acknowledged, answered in the background
	outcomeDuplicate  = "duplicate" // a retry of a delivery taken before
	outcomeIgnored    = "ignored"   // not a person's text message (edits, bots, joins)
	outcomeChallenge  = "challenge" // Slack's url_verification
	outcomeRefused    = "refused"   // bad signature or secret token
	outcomeInvalid    = "invalid"   // malformed body
	outcomeLimited    = "rate_limited"
	outcomeFailed     = "failed"
	outcomeNotFound   = "not_found"
	outcomeOtherError = "error"
)

// metrics counts channel traffic by kind (webhook, telegram, slack) and
// outcome, both bounded sets.
type metrics struct {
	messages    *prometheus.CounterVec
	sendFailure *prometheus.CounterVec
	retries     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_channel_messages_total",
			Help: "Requests to channels' inbound route, by channel kind and outcome."}, []string{"kind", "outcome"}),
		sendFailure: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_channel_reply_failures_total",
			Help: "Replies that could not be answered or sent back to the channel's platform, by channel kind."}, []string{"kind"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_channel_retries_total",
			Help: "Answers and replies put back in the channel queue to try again later, by channel kind."}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.messages, m.sendFailure, m.retries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) inbound(kind, outcome string) { m.messages.WithLabelValues(kind, outcome).Inc() }

func (m *metrics) replyFailed(kind string) { m.sendFailure.WithLabelValues(kind).Inc() }

func (m *metrics) retried(kind string) { m.retries.WithLabelValues(kind).Inc() }

// outcomeOf labels a refused request by its error's code.
func outcomeOf(err error) string {
	var e *platform.Error
	if !errors.As(err, &e) {
		return outcomeFailed
	}
	switch e.Code {
	case platform.CodeUnauthorized:
		return outcomeRefused
	case platform.CodeInvalid:
		return outcomeInvalid
	case platform.CodeRateLimited:
		return outcomeLimited
	case platform.CodeNotFound:
		return outcomeNotFound
	case platform.CodeInternal:
		return outcomeFailed
	}
	return outcomeOtherError
}
