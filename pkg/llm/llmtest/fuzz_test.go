package llmtest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// FuzzServerRequest: any body gets a JSON answer, a 200 or an OpenAI-shaped
// 400, and never crashes the fake.
//
//	go test -run '^$' -fuzz FuzzServerRequest -fuzztime 30s ./pkg/llm/llmtest
func FuzzServerRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{"}}]},{"role":"tool","tool_call_id":"c","content":"x"}]}`,
		`{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":[]}}}],"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":1}`, `[]`, `null`, ``,
	} {
		f.Add(seed)
	}
	s := llmtest.NewHandler(llmtest.Options{Handler: func(r *llmtest.ChatRequest) llmtest.ServerReply {
		return llmtest.ServerReply{Text: "echo " + r.LastUserText()}
	}})
	f.Fuzz(func(t *testing.T, body string) {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
		switch w.Code {
		case http.StatusOK:
			if ct := w.Header().Get("Content-Type"); ct == "text/event-stream" {
				if !strings.HasSuffix(w.Body.String(), "data: [DONE]\n\n") {
					t.Fatalf("stream for %q did not end with [DONE]", body)
				}
				return
			}
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("200 for %q is not JSON: %s", body, w.Body)
			}
		case http.StatusBadRequest:
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Message == "" {
				t.Fatalf("400 for %q is not an OpenAI error: %s", body, w.Body)
			}
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
	})
}
