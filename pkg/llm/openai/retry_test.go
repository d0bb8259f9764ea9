package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

func TestRetriesHonourRetryAfterInSeconds(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{})
	s.Enqueue(llmtest.RateLimited("1"), llmtest.ServerReply{Text: "finally"})
	resp, err := p.Complete(context.Background(), userRequest("hi"))
	if err != nil || resp.Message.Text() != "finally" {
		t.Fatalf("Complete = %v, %v; want the reply after one retry", resp, err)
	}
	recs := s.Requests()
	if len(recs) != 2 {
		t.Fatalf("server saw %d attempts; want 2", len(recs))
	}
	if gap := recs[1].At.Sub(recs[0].At); gap < time.Second {
		t.Fatalf("the retry arrived %v after the 429; Retry-After asked for 1s", gap)
	}
}

func TestRetriesHonourRetryAfterAsAnHTTPDate(t *testing.T) {
	var until time.Time
	first := true
	p, s := newProvider(t, llmtest.Options{Handler: func(*llmtest.ChatRequest) llmtest.ServerReply {
		if first {
			first = false
			until = time.Now().Add(2 * time.Second).Truncate(time.Second)
			return llmtest.RateLimited(until.UTC().Format(http.TimeFormat))
		}
		return llmtest.ServerReply{Text: "ok"}
	}})
	if _, err := p.Complete(context.Background(), userRequest("hi")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	recs := s.Requests()
	if len(recs) != 2 || recs[1].At.Before(until) {
		t.Fatalf("%d attempts, the retry at %v; want 2, the retry not before %v", len(recs), recs[1].At, until)
	}
}

func TestRetriesTransientFailures(t *testing.T) {
	tests := []struct {
		name         string
		script       []llmtest.ServerReply
		stream       bool
		wantAttempts int
	}{
		{"two server errors, then success", []llmtest.ServerReply{llmtest.ServerFailure(), llmtest.ServerFailure(), {Text: "ok"}}, false, 3},
		{"a rate limit without Retry-After, then success", []llmtest.ServerReply{llmtest.RateLimited(""), {Text: "ok"}}, false, 2},
		{"a dropped connection, then success", []llmtest.ServerReply{{Fault: &llmtest.Fault{Disconnect: true}}, {Text: "ok"}}, false, 2},
		{"a stream refused before it began, then success", []llmtest.ServerReply{llmtest.ServerFailure(), {Text: "ok"}}, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{})
			s.Enqueue(tt.script...)
			var resp *llm.Response
			var err error
			if tt.stream {
				resp, err = p.Stream(context.Background(), userRequest("hi"), nil)
			} else {
				resp, err = p.Complete(context.Background(), userRequest("hi"))
			}
			if err != nil || resp.Message.Text() != "ok" {
				t.Fatalf("got %v, %v; want ok", resp, err)
			}
			if n := len(s.Requests()); n != tt.wantAttempts {
				t.Fatalf("server saw %d attempts; want %d", n, tt.wantAttempts)
			}
		})
	}
}

// A request the server received on a reused connection that then broke
// may be in the model's hands already; sending it again could run (and
// bill) the turn twice, so the failure goes back to the caller instead.
func TestARequestWrittenToAReusedConnectionThatFailsIsNotSentAgain(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "a completion"
		if stream {
			name = "a stream"
		}
		t.Run(name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{})
			s.Enqueue(llmtest.ServerReply{Text: "first"}, llmtest.ServerReply{Fault: &llmtest.Fault{Disconnect: true}}, llmtest.ServerReply{Text: "twice"})
			if _, err := p.Complete(context.Background(), userRequest("hi")); err != nil {
				t.Fatalf("first call: %v", err)
			}
			var err error
			if stream {
				_, err = p.Stream(context.Background(), userRequest("again"), nil)
			} else {
				_, err = p.Complete(context.Background(), userRequest("again"))
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.ErrNetwork || !e.Retryable {
				t.Fatalf("second call = %v; want a retryable network error", err)
			}
			if n := len(s.Requests()); n != 2 {
				t.Fatalf("server saw %d requests; want 2 (the broken one not sent again)", n)
			}
		})
	}
}

func TestNoRetryForErrorsThatWaitingDoesNotFix(t *testing.T) {
	tests := []struct {
		name     string
		reply    llmtest.ServerReply
		apiKey   string
		wantKind llm.ErrorKind
		wantCode int
	}{
		{"a wrong API key", llmtest.ServerReply{Text: "unused"}, "sk-wrong-secret-key-42", llm.ErrAuth, 401},
		{"a bad request", llmtest.ServerReply{Fault: &llmtest.Fault{Status: 400, Type: "invalid_request_error", Message: "bad"}}, "", llm.ErrBadRequest, 400},
		{"a forbidden model", llmtest.ServerReply{Fault: &llmtest.Fault{Status: 403, Type: "invalid_request_error", Message: "no access"}}, "", llm.ErrAuth, 403},
		{"a prompt over the context window", llmtest.ContextTooLong(), "", llm.ErrContextLength, 400},
		{"an exhausted quota", llmtest.QuotaExhausted(), "", llm.ErrQuota, 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{}, func(c *openai.Config) {
				if tt.apiKey != "" {
					c.APIKey = tt.apiKey
				}
			})
			s.Enqueue(tt.reply)
			_, err := p.Complete(context.Background(), userRequest("hi"))
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.wantKind || e.StatusCode != tt.wantCode || e.Retryable || e.Provider != "fake" {
				t.Fatalf("err = %#v; want a non-retryable %s with status %d", err, tt.wantKind, tt.wantCode)
			}
			if n := len(s.Requests()); n != 1 {
				t.Fatalf("server saw %d attempts; want exactly 1", n)
			}
		})
	}
}

func TestGivingUpReportsTheLastFailure(t *testing.T) {
	tests := []struct {
		name           string
		reply          llmtest.ServerReply
		maxRetries     int
		wantKind       llm.ErrorKind
		wantAttempts   int
		wantRetryAfter time.Duration
	}{
		{"server errors beyond the retry budget", llmtest.ServerFailure(), 0, llm.ErrServer, 3, 0},
		{"retries switched off", llmtest.ServerFailure(), -1, llm.ErrServer, 1, 0},
		{"a Retry-After longer than the provider waits", llmtest.RateLimited("60"), 0, llm.ErrRateLimit, 1, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{}, func(c *openai.Config) { c.MaxRetries = tt.maxRetries })
			for range 4 {
				s.Enqueue(tt.reply)
			}
			_, err := p.Complete(context.Background(), userRequest("hi"))
			retryable, after := llm.IsRetryable(err)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.wantKind || !retryable || after != tt.wantRetryAfter {
				t.Fatalf("err = %#v; want a retryable %s asking to wait %v", err, tt.wantKind, tt.wantRetryAfter)
			}
			if n := len(s.Requests()); n != tt.wantAttempts {
				t.Fatalf("server saw %d attempts; want %d", n, tt.wantAttempts)
			}
			if tt.wantAttempts > 1 && !strings.Contains(e.Message, fmt.Sprintf("after %d attempts", tt.wantAttempts)) {
				t.Fatalf("message %q does not say how often it was tried", e.Message)
			}
		})
	}
}

func TestAnUnreachableServerIsARetryableNetworkError(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	url := s.URL()
	s.Close()
	p, err := openai.New(openai.Config{BaseURL: url, APIKey: testKey, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), userRequest("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrNetwork || !e.Retryable {
		t.Fatalf("err = %#v; want a retryable network error", err)
	}
}

func TestCancellationStopsARetryWait(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{})
	s.Enqueue(llmtest.RateLimited("15"), llmtest.ServerReply{Text: "too late"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Complete(ctx, userRequest("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %#v; want a timeout wrapping context.DeadlineExceeded", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Fatalf("server saw %d attempts; want the retry abandoned", n)
	}
}

func TestCancellationStopsASlowReply(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{Latency: time.Minute})
	s.Enqueue(llmtest.ServerReply{Text: "too late"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(s.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := p.Complete(ctx, userRequest("hi"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrCanceled || e.Retryable {
		t.Fatalf("err = %#v; want a non-retryable canceled error", err)
	}
}
