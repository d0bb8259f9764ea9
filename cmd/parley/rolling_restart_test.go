package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/longtest"
)

// TestARollingRestartUnderLoadLosesNoMessageAndAnswersNoneTwice: three
// servers sharing PostgreSQL and Redis serve dialogs that send one
// message after another, while each server in turn is stopped with
// SIGTERM, as a rolling update does, and started again. A client retries
// what a stopping server did not answer, or cut (server_restarting), on
// another server, with the same Idempotency-Key, as docs/api.md says
// (sendOnce). In the end every message is stored once, in order, and has
// exactly one complete answer.
func TestARollingRestartUnderLoadLosesNoMessageAndAnswersNoneTwice(t *testing.T) {
	longtest.Skip(t, "stops and restarts three real server processes under load")
	t.Parallel()
	red := startRedis(t)
	log := &modelLog{fake: llmtest.NewHandler(llmtest.Options{APIKey: "sk-e2e", Latency: 30 * time.Millisecond,
		Handler: func(req *llmtest.ChatRequest) llmtest.ServerReply {
			return llmtest.ServerReply{Text: "re: " + req.LastUserText()}
		}})}
	servers := startServers(t, log, parleyEnv{"PARLEY_REDIS_URL": red.URL()}, 3)
	key, _ := setupDialog(t, servers[0].URL)

	var mu sync.Mutex // guards servers
	pick := func(n int) string {
		mu.Lock()
		defer mu.Unlock()
		return servers[n%len(servers)].URL
	}
	const workers = 6
	dialogs := make([]string, workers)
	for i := range dialogs {
		dialogs[i] = newDialog(t, servers[0].URL, key)
	}
	var stop atomic.Bool
	var cuts atomic.Int64 // replies a stopping server cut, retried with their key
	sent := make([][]string, workers)
	retries := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				text := fmt.Sprintf("worker %d message %d", w, n)
				r, err := sendOnce(pick, w+n, key, dialogs[w], text, &cuts)
				retries[w] += r
				if err != nil {
					t.Error(err)
					return
				}
				sent[w] = append(sent[w], text)
			}
		})
	}
	for i := range servers {
		time.Sleep(300 * time.Millisecond) // load runs on every server
		mu.Lock()
		old := servers[i]
		mu.Unlock()
		old.cmd.Process.Signal(syscall.SIGTERM)
		<-old.exited
		fresh := startProcess(t, old.bin, old.env)
		mu.Lock()
		servers[i] = fresh
		mu.Unlock()
	}
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	total, again := 0, 0
	for w := range workers {
		total += len(sent[w])
		again += retries[w]
		msgs := waitNothingInProgress(t, pick(0), key, dialogs[w])
		var users []string
		answers := map[string]int{}
		for _, m := range msgs {
			switch {
			case m.Kind == "user":
				users = append(users, m.Text)
			case m.Kind == "assistant" && m.Status == "complete":
				answers[strings.TrimPrefix(m.Text, "re: ")]++
			}
		}
		if !slices.Equal(users, sent[w]) {
			t.Errorf("dialog %d stores the user messages\n%q\nwant each message sent once, in order\n%q", w, users, sent[w])
		}
		for _, text := range sent[w] {
			if answers[text] != 1 {
				t.Errorf("dialog %d: %q has %d complete answers, want 1", w, text, answers[text])
			}
		}
	}
	t.Logf("%d messages over %d dialogs through a rolling restart of 3 servers; %d attempts retried, %d of them after a reply cut by SIGTERM",
		total, workers, again, cuts.Load())
}

// sendOnce posts text until a server answers it 200, moving to the next
// server after a refused connection, a 409 or a 503, as a client of a
// rolling update does, and says how many attempts it retried. Each attempt
// carries an Idempotency-Key, so one whose answer was lost on the way is
// not stored twice, nor is one whose reply a stopping server cut
// (server_restarting), counted in cuts: that answer is not recorded under
// the key, and the retry with the key answers the stored text.
func sendOnce(pick func(int) string, first int, key, dialog, text string, cuts *atomic.Int64) (int, error) {
	body, _ := json.Marshal(apiclient.SendMessageRequest{Text: text})
	deadline := time.Now().Add(retryFor)
	idem := strings.ReplaceAll(text, " ", "-")
	for attempt := first; ; attempt++ {
		req, _ := http.NewRequest(http.MethodPost, pick(attempt)+"/v1/tenants/acme/dialogs/"+dialog+"/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", idem)
		resp, err := http.DefaultClient.Do(req)
		status, code := 0, ""
		if err == nil {
			status = resp.StatusCode
			var e apiclient.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&e)
			code = e.Error.Code
			resp.Body.Close()
		}
		switch {
		case status == http.StatusOK:
			return attempt - first, nil
		case code == "server_restarting":
			cuts.Add(1)
		case err != nil, status == http.StatusConflict, status == http.StatusServiceUnavailable:
		default:
			return attempt - first, fmt.Errorf("%q was refused with %d %s", text, status, code)
		}
		if time.Now().After(deadline) {
			return attempt - first, fmt.Errorf("%q was still not answered after %s (last: %d %s %v)", text, retryFor, status, code, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitNothingInProgress reads the dialog until no message of it is queued or
// streaming (a reply a stopping server cut stays interrupted), and
// returns its messages.
func waitNothingInProgress(t *testing.T, base, key, dialog string) []apiclient.Message {
	t.Helper()
	deadline := time.Now().Add(answerTimeout)
	for {
		d, err := apiclient.New(base, key).GetDialog(context.Background(), "acme", dialog)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(d.Messages, func(m apiclient.Message) bool { return m.Status != "complete" && m.Status != "interrupted" }) {
			return d.Messages
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s dialog %s still has messages in progress", answerTimeout, dialog)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
