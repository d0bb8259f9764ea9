package httpretry

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// New returns a client that sends each attempt through hc and retries up
// to retries times while check says so, waiting Backoff(lo, hi, ...)
// between attempts. Retries happen before the response is returned, so a
// body the caller has begun to read is never replayed.
//
// retryablehttp closes its client's idle connections after every call
// that fails for good; hc is shared by every dialog, so the retrying
// client sends through hc's transport without that power.
func New(hc *http.Client, retries int, lo, hi time.Duration, check retryablehttp.CheckRetry) *retryablehttp.Client {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport // what hc itself would use
	}
	return &retryablehttp.Client{
		HTTPClient: &http.Client{Transport: keepIdle{rt}, CheckRedirect: hc.CheckRedirect,
			Jar: hc.Jar, Timeout: hc.Timeout},
		RetryMax:     max(retries, 0),
		RetryWaitMin: lo,
		RetryWaitMax: hi,
		CheckRetry:   check,
		Backoff:      Backoff,
		ErrorHandler: LastResponse,
	}
}

// keepIdle is a transport without CloseIdleConnections.
type keepIdle struct{ rt http.RoundTripper }

func (k keepIdle) RoundTrip(req *http.Request) (*http.Response, error) { return k.rt.RoundTrip(req) }

// Backoff waits what the server asked for in resp, else an exponentially
// growing, jittered delay (half fixed, half random) so clients that failed
// together do not retry together.
func Backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if wait, ok := RetryAfter(resp.Header); ok {
			return wait
		}
	}
	d := hi
	if attempt < 30 && lo<<attempt < hi {
		d = lo << attempt
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

// LastResponse is the retryablehttp.ErrorHandler that returns the last
// response when there is one, so its status and body reach the caller,
// and otherwise the last error with the number of attempts.
func LastResponse(resp *http.Response, err error, attempts int) (*http.Response, error) {
	if resp != nil && err == nil {
		return resp, nil
	}
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err == nil {
		err = errors.New("no response")
	}
	return nil, fmt.Errorf("after %d attempt(s): %w", attempts, err)
}

// RetryAfter reads the wait a response asks for: retry-after-ms (sent by
// OpenAI), then Retry-After in seconds or as an HTTP date. A date in the
// past means now; a negative or unreadable value means the server named
// no wait.
func RetryAfter(h http.Header) (time.Duration, bool) {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 {
			return time.Duration(v * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}
