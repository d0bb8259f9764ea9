package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// Each round sends this many messages to one dialog at once, alternating
// between the two servers.
const (
	burstRounds   = 5
	burstMessages = 20
)

// modelLog wraps the fake model and records when each chat request
// arrived and when its answer ended, to prove that no two loops of the
// dialog ever called the model at the same time.
type modelLog struct {
	fake *llmtest.Server
	mu   sync.Mutex
	runs []span
}

type span struct{ from, to time.Time }

func (l *modelLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	from := time.Now()
	l.fake.ServeHTTP(w, r)
	if r.URL.Path == "/v1/chat/completions" {
		l.mu.Lock()
		l.runs = append(l.runs, span{from, time.Now()})
		l.mu.Unlock()
	}
}

// calls says how many chat requests have arrived.
func (l *modelLog) calls() int {
	n := 0
	for _, rec := range l.fake.Requests() {
		if rec.Path == "/v1/chat/completions" {
			n++
		}
	}
	return n
}

// waitCalls waits until n chat requests have arrived.
func (l *modelLog) waitCalls(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(answerTimeout)
	for l.calls() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the model got %d calls in %s, want %d", l.calls(), answerTimeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// overlap returns two model calls that ran at once, if any.
func (l *modelLog) overlap() (span, span, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := slices.Clone(l.runs)
	sort.Slice(s, func(i, j int) bool { return s[i].from.Before(s[j].from) })
	for i := 1; i < len(s); i++ {
		if s[i].from.Before(s[i-1].to) {
			return s[i-1], s[i], true
		}
	}
	return span{}, span{}, false
}

// accepted is one message a server took: when its final attempt was sent
// and when the answer came back.
type accepted struct {
	text     string
	sent, at time.Time
}

// TestTwoServersOnOnePostgreSQLNeverAnswerADialogTwiceAtOnce starts two
// real server processes on one database and fires bursts of messages for
// one dialog at both. A server that does not hold the dialog's lease
// answers 409, and the client retries, as a client should.
func TestTwoServersOnOnePostgreSQLNeverAnswerADialogTwiceAtOnce(t *testing.T) {
	t.Parallel()
	log := &modelLog{fake: llmtest.NewHandler(llmtest.Options{APIKey: "sk-e2e", FragmentSize: 4,
		Latency: 20 * time.Millisecond, ChunkDelay: 5 * time.Millisecond,
		Handler: func(req *llmtest.ChatRequest) llmtest.ServerReply {
			return llmtest.ServerReply{Text: "re: " + req.LastUserText()}
		}})}
	servers := startPair(t, log, parleyEnv{})
	key, d := setupDialog(t, servers[0].URL)

	var all []accepted
	conflicts := 0
	for round := range burstRounds {
		got, n := burst(t, servers, log, key, d, round)
		all, conflicts = append(all, got...), conflicts+n
	}
	t.Logf("%d messages accepted after %d answers of 409 from the server not holding the lease", len(all), conflicts)
	msgs := waitAnswered(t, servers[1].URL, key, d, len(all))

	t.Run("no two model calls for the dialog overlapped", func(t *testing.T) {
		if a, b, ok := log.overlap(); ok {
			t.Fatalf("a call ran %s..%s while another ran %s..%s", a.from.Format(time.StampMicro), a.to.Format(time.StampMicro),
				b.from.Format(time.StampMicro), b.to.Format(time.StampMicro))
		}
	})
	t.Run("every accepted message is stored once and answered", func(t *testing.T) {
		var users []string
		for _, m := range msgs {
			if m.Kind == "user" {
				users = append(users, m.Text)
			}
		}
		var sent []string
		for _, a := range all {
			sent = append(sent, a.text)
		}
		slices.Sort(users)
		slices.Sort(sent)
		if !slices.Equal(users, sent) {
			t.Fatalf("stored user messages\n%q\nwant the accepted\n%q", users, sent)
		}
	})
	t.Run("each reply follows the messages it answers, never another loop's", func(t *testing.T) {
		var run []string // user texts since the last reply
		for _, m := range msgs {
			switch {
			case m.Kind == "user":
				run = append(run, m.Text)
			case m.Kind == "assistant" && len(run) > 0 && m.Text == "re: "+run[len(run)-1]:
				run = nil
			default:
				t.Fatalf("message %d %s %q does not answer the user messages %q before it", m.Seq, m.Kind, m.Text, run)
			}
		}
		if len(run) > 0 {
			t.Fatalf("user messages %q were never answered", run)
		}
	})
	t.Run("the model saw each conversation exactly as stored", func(t *testing.T) {
		for _, rec := range log.fake.Requests() {
			if rec.Request == nil {
				continue
			}
			got := conversation(rec.Request)
			var want []string
			for _, m := range msgs {
				if m.Kind == "assistant" && m.Text == "re: "+rec.Request.LastUserText() {
					break
				}
				want = append(want, m.Role+":"+m.Text)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("the model was sent\n%q\nbut the dialog stores before its reply\n%q", got, want)
			}
		}
	})
	t.Run("a message accepted before another was sent is stored before it", func(t *testing.T) {
		seq := map[string]int64{}
		for _, m := range msgs {
			if m.Kind == "user" {
				seq[m.Text] = m.Seq
			}
		}
		for _, x := range all {
			for _, y := range all {
				if x.at.Before(y.sent) && seq[x.text] > seq[y.text] {
					t.Fatalf("%q was accepted before %q was sent, but is stored after it (seq %d > %d)", x.text, y.text, seq[x.text], seq[y.text])
				}
			}
		}
	})
}

// startPair starts two server processes (parleyBinary) on one fresh,
// migrated PostgreSQL schema, answering with the fake model behind log,
// with env added to their settings. An empty schema would have them queue
// at start for the database's one migration lock, behind every other
// test's. It skips the test without PostgreSQL or under -short.
func startPair(t *testing.T, log *modelLog, env parleyEnv) []*process {
	t.Helper()
	return startServers(t, log, env, 2)
}

// startServers is startPair with n servers.
func startServers(t *testing.T, log *modelLog, env parleyEnv, n int) []*process {
	t.Helper()
	databaseURL := os.Getenv(storetest.EnvDatabaseURL)
	if databaseURL == "" {
		t.Skip(storetest.EnvDatabaseURL + " is not set; several servers need a shared PostgreSQL")
	}
	if testing.Short() {
		t.Skip("starts several server processes")
	}
	bin := parleyBinary(t)
	fake := httptest.NewServer(log)
	t.Cleanup(fake.Close)
	for k, v := range map[string]string{"PARLEY_DATABASE_URL": storetest.PostgresSchema(t, databaseURL), "PARLEY_DATA_DIR": t.TempDir(),
		"PARLEY_SECRET_KEY": strings.Repeat("ab", 32), "PARLEY_PLATFORM_TOKEN": e2eToken,
		"PARLEY_LLM_BASE_URL": fake.URL + "/v1", "PARLEY_LLM_API_KEY": "sk-e2e",
		"PARLEY_RATE_LIMIT_TENANT": "off", "PARLEY_RATE_LIMIT_KEY": "off"} {
		if _, set := env[k]; !set || k == "PARLEY_DATABASE_URL" {
			env[k] = v
		}
	}
	servers := make([]*process, n)
	for i := range servers {
		servers[i] = startProcess(t, bin, env)
	}
	return servers
}

// retryFor bounds how long a sender retries a message refused with 409.
const retryFor = 30 * time.Second

// burst sends burstMessages messages, alternating servers, each retried
// after a 409 until a server accepts it; any other refusal fails the test.
// The round's first message goes to server round%2 alone, and the rest
// follow at once when the model is answering it: so each server holds the
// lease in some rounds, and the other one's messages meet a dialog busy
// in another process.
func burst(t *testing.T, servers []*process, log *modelLog, key, dialog string, round int) (out []accepted, conflicts int) {
	t.Helper()
	out = make([]accepted, burstMessages)
	errs := make(chan error, burstMessages)
	refused := make(chan int, burstMessages)
	send := func(i, server int) {
		a, n, err := sendUntilAccepted(servers, server, key, dialog, fmt.Sprintf("round %d message %d", round, i))
		out[i] = a
		refused <- n
		if err != nil {
			errs <- err
		}
	}
	calls := log.calls()
	var wg sync.WaitGroup
	wg.Go(func() { send(0, round) })
	log.waitCalls(t, calls+1)
	for i := 1; i < burstMessages; i++ {
		wg.Go(func() { send(i, round+i) })
	}
	wg.Wait()
	close(errs)
	close(refused)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	for n := range refused {
		conflicts += n
	}
	return out, conflicts
}

// sendUntilAccepted posts text to server first%2, and after a 409 to the
// other one, until one accepts it; it says how many 409s it got.
func sendUntilAccepted(servers []*process, first int, key, dialog, text string) (accepted, int, error) {
	deadline := time.Now().Add(retryFor)
	for attempt := first; ; attempt++ {
		sent := time.Now()
		_, err := apiclient.New(servers[attempt%len(servers)].URL, key).SendMessage(context.Background(), "acme", dialog, text)
		if err == nil {
			return accepted{text: text, sent: sent, at: time.Now()}, attempt - first, nil
		}
		var e *apiclient.Error
		if !errors.As(err, &e) || e.Status != http.StatusConflict {
			return accepted{}, attempt - first, fmt.Errorf("%q was refused with %v; only 409 may refuse a message", text, err)
		}
		if time.Now().After(deadline) {
			return accepted{}, attempt - first, fmt.Errorf("%q was still refused with 409 after %s", text, retryFor)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answerTimeout bounds the wait for the last queued message's reply.
const answerTimeout = 10 * time.Second

// waitAnswered reads the dialog until it holds users user messages and
// nothing is queued or streaming, and returns its messages.
func waitAnswered(t *testing.T, base, key, dialog string, users int) []apiclient.Message {
	t.Helper()
	deadline := time.Now().Add(answerTimeout)
	for {
		d, err := apiclient.New(base, key).GetDialog(context.Background(), "acme", dialog)
		if err != nil {
			t.Fatal(err)
		}
		n, busy := 0, false
		for _, m := range d.Messages {
			if m.Kind == "user" {
				n++
			}
			busy = busy || m.Status != "complete"
		}
		if n >= users && !busy {
			return d.Messages
		}
		if time.Now().After(deadline) {
			var left []string
			for _, m := range d.Messages {
				if m.Status != "complete" {
					left = append(left, fmt.Sprintf("%d %s %s %q", m.Seq, m.Kind, m.Status, m.Text))
				}
			}
			t.Fatalf("after %s the dialog holds %d of %d user messages; not complete: %q", answerTimeout, n, users, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
