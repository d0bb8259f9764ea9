package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/outbound"
)

// Timeout bounds one attempt, connection to last byte, as the standard
// recommends.
const Timeout = 15 * time.Second

// ExcerptBytes caps the response body kept in the delivery log.
const ExcerptBytes = 1024

// Outcome is what one attempt means for its delivery.
type Outcome int

// Outcomes of an attempt.
const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = iota
	// Retry: any other answer, a timeout or a network error; try again on
	// the schedule.
	Retry
	// Gone: 410, the receiver asks never to be called again; the endpoint
	// is disabled.
	Gone
)

// Result is one attempt as the delivery log records it: no request
// headers, so no signature or secret, and only an excerpt of the answer.
type Result struct {
	Outcome Outcome
	// Status is the HTTP status; 0 when no answer came.
	Status   int
	Duration time.Duration
	// Excerpt is the start of the response body, valid UTF-8.
	Excerpt string
	// Error says why no answer came (timeout, refused address, ...),
	// without the URL's query.
	Error string
	// RetryAfter is the receiver's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
}

// Message is one signed POST: its id stays the same on every attempt, so
// receivers can tell a retry from a new event.
type Message struct {
	ID   string
	URL  string
	Body []byte
	// Keys sign the message, newest first (SecretKey of each secret).
	Keys [][]byte
}

// Send makes one attempt: POST m with fresh timestamp and signatures,
// within timeout (Timeout when 0). client must be an outbound client, as
// the URL is the tenant's.
func Send(ctx context.Context, client *http.Client, m Message, timeout time.Duration, now func() time.Time) Result {
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(m.Body))
	if err != nil {
		return Result{Outcome: Retry, Error: "the URL cannot be requested"}
	}
	for k, v := range Sign(m.ID, start, m.Body, m.Keys...) {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Parley-Webhooks/1")
	resp, err := client.Do(req)
	if err != nil {
		return Result{Outcome: Retry, Duration: time.Since(start), Error: describe(ctx, err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	res := Result{Status: resp.StatusCode, Duration: time.Since(start), Excerpt: excerpt(body),
		RetryAfter: ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.Outcome = Delivered
	case resp.StatusCode == http.StatusGone:
		res.Outcome = Gone
	default:
		res.Outcome = Retry
	}
	return res
}

// describe words a failed request for the delivery log. The client's
// errors name the URL; that may hold a token in its query, so the words
// are ours.
func describe(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "timed out"
	}
	var denied *outbound.DeniedError
	var redirect *outbound.RedirectError
	var lookup *outbound.LookupError
	switch {
	case errors.As(err, &denied):
		return denied.Error()
	case errors.As(err, &redirect):
		return redirect.Error()
	case errors.As(err, &lookup):
		return lookup.Error()
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	}
	return "request failed"
}

func excerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
