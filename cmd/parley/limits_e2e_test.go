package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// postMessage sends text as a JSON message and returns the response's
// status, Retry-After header and error code.
func postMessage(t *testing.T, base, key, dialog, text string) (status int, retryAfter, code string) {
	t.Helper()
	body := strings.NewReader(`{"text": ` + strconv.Quote(text) + `}`)
	req, err := http.NewRequest("POST", base+"/v1/tenants/acme/dialogs/"+dialog+"/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code string }
	}
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, resp.Header.Get("Retry-After"), e.Error.Code
}

func TestTheServeSettingsLimitMessagesWith429AndRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  parleyEnv
		// minWait and maxWait bound the Retry-After of the refused message,
		// in seconds.
		minWait, maxWait int
	}{
		{name: "a key over its rate waits for its next token",
			env:     parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "off", "PARLEY_RATE_LIMIT_KEY": "1/h"},
			minWait: 3000, maxWait: 3600},
		{name: "a tenant over its rate waits for its next token",
			env:     parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "2/m,burst=1", "PARLEY_RATE_LIMIT_KEY": "off"},
			minWait: 20, maxWait: 30},
		{name: "a tenant over its daily tokens waits for midnight UTC",
			env:     parleyEnv{"PARLEY_RATE_LIMIT_TENANT": "off", "PARLEY_RATE_LIMIT_KEY": "off", "PARLEY_DAILY_TOKEN_QUOTA": "1"},
			minWait: 1, maxWait: 24 * 3600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env["PARLEY_DATA_DIR"] = t.TempDir()
			llm := chatServer(t, tt.env, llmtest.Options{})
			srv := startParley(t, tt.env)
			key, d := setupDialog(t, srv.URL)
			llm.Enqueue(llmtest.ServerReply{Text: "First answer."})
			if status, _, _ := postMessage(t, srv.URL, key, d, "first"); status != http.StatusOK {
				t.Fatalf("the first message got %d, want 200", status)
			}
			status, retry, code := postMessage(t, srv.URL, key, d, "second")
			if status != http.StatusTooManyRequests || code != "rate_limited" {
				t.Fatalf("the second message got %d %q, want 429 rate_limited", status, code)
			}
			if wait, err := strconv.Atoi(retry); err != nil || wait < tt.minWait || wait > tt.maxWait {
				t.Fatalf("Retry-After %q, want seconds from %d to %d", retry, tt.minWait, tt.maxWait)
			}
			for _, m := range dialogMessages(t, srv.URL, key, d) {
				if strings.HasPrefix(m, "user:") && m != "user:complete:first" {
					t.Fatalf("the refused message was stored: %q", m)
				}
			}
		})
	}
}
