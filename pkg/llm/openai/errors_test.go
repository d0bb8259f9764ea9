package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
)

// errorTexts returns every way a caller might print or log err.
func errorTexts(err error) []string {
	texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		texts = append(texts, e.Error(), fmt.Sprintf("%#v", e))
	}
	return texts
}

func TestErrorsNeverHoldTheAPIKey(t *testing.T) {
	const wrongKey = "sk-proj-this-is-a-secret-value"
	p, s := newProvider(t, llmtest.Options{}, func(c *openai.Config) { c.APIKey = wrongKey })
	s.Enqueue(llmtest.ServerReply{Text: "unused"})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			var err error
			if stream {
				_, err = p.Stream(context.Background(), userRequest("hi"), nil)
			} else {
				_, err = p.Complete(context.Background(), userRequest("hi"))
			}
			if err == nil {
				t.Fatal("a wrong key was accepted")
			}
			if rec := s.Requests(); !strings.Contains(string(rec[len(rec)-1].Header.Get("Authorization")), wrongKey) {
				t.Fatal("the test is void: the key was never sent")
			}
			for _, text := range errorTexts(err) {
				if strings.Contains(text, wrongKey) {
					t.Fatalf("error text holds the API key: %s", text)
				}
			}
			var e *llm.Error
			if !errors.As(err, &e) || !strings.Contains(e.Message, "Incorrect API key provided: [redacted]") {
				t.Fatalf("err = %v; want the server's message with the key redacted", err)
			}
		})
	}
}

func TestErrorKindsByStatus(t *testing.T) {
	tests := []struct {
		name          string
		fault         llmtest.Fault
		wantKind      llm.ErrorKind
		wantRetryable bool
	}{
		{"401 means the key is wrong", llmtest.Fault{Status: 401, Type: "invalid_request_error", Message: "bad key"}, llm.ErrAuth, false},
		{"403 means the key may not do this", llmtest.Fault{Status: 403, Message: "forbidden"}, llm.ErrAuth, false},
		{"404 is a bad request (an unknown model)", llmtest.Fault{Status: 404, Code: "model_not_found", Message: "The model does not exist"}, llm.ErrBadRequest, false},
		{"422 is a bad request", llmtest.Fault{Status: 422, Message: "unprocessable"}, llm.ErrBadRequest, false},
		{"a context-length message without its code still counts", llmtest.Fault{Status: 400, Message: "This model's maximum context length is 4097 tokens"}, llm.ErrContextLength, false},
		{"429 for spend limits is quota", llmtest.Fault{Status: 429, Type: "insufficient_quota", Message: "quota"}, llm.ErrQuota, false},
		{"503 is a retryable server error", llmtest.Fault{Status: 503, Message: "overloaded"}, llm.ErrServer, true},
		{"504 is a retryable timeout", llmtest.Fault{Status: 504, Message: "the upstream timed out"}, llm.ErrTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{}, func(c *openai.Config) { c.MaxRetries = -1 })
			f := tt.fault
			s.Enqueue(llmtest.ServerReply{Fault: &f})
			_, err := p.Complete(context.Background(), userRequest("hi"))
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.wantKind || e.Retryable != tt.wantRetryable || e.StatusCode != tt.fault.Status {
				t.Fatalf("err = %#v; want kind %s, retryable %v, status %d", err, tt.wantKind, tt.wantRetryable, tt.fault.Status)
			}
			if e.Message != tt.fault.Message {
				t.Fatalf("message %q; want the server's %q", e.Message, tt.fault.Message)
			}
		})
	}
}

// TestErrorsNeverHoldTheAPIKeyHoweverAProxyEchoesIt puts a gateway in front
// of the API that answers 401 with the key it got echoed in every encoding.
func TestErrorsNeverHoldTheAPIKeyHoweverAProxyEchoesIt(t *testing.T) {
	const key = "sk-proj/éa+b=c&d-secret"
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		var msg strings.Builder
		for _, sp := range redacttest.Spellings(got) {
			msg.WriteString(sp.Name + ": " + sp.Text + "\n")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg.String(), "type": "invalid_request_error"}})
	}))
	t.Cleanup(gateway.Close)
	p, err := openai.New(openai.Config{BaseURL: gateway.URL + "/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), userRequest("hi"))
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an llm.Error", err)
	}
	for _, sp := range redacttest.Spellings(key) {
		if !strings.Contains(e.Message, sp.Name+": [redacted]\n") {
			t.Errorf("%s: not redacted in %q", sp.Name, e.Message)
		}
		for _, text := range errorTexts(err) {
			if strings.Contains(text, sp.Text) {
				t.Errorf("%s: an error text holds the key: %.300s", sp.Name, text)
			}
		}
	}
}
