package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/longtest"
	"github.com/parleyhq/parley/pkg/store"
)

// crashes is how many times the crash test kills the server, per
// database: twice and once in make test, 20 and 10 times in a long run.
var crashes = longtest.Pick(map[string]int{store.DialectSQLite: 2, store.DialectPostgres: 1},
	map[string]int{store.DialectSQLite: 20, store.DialectPostgres: 10})

// storyText is the long reply the fake model streams slowly, so the kill
// always lands mid-stream.
var storyText = strings.Repeat("once upon a time ", 30)

// storyOrEcho answers a text starting with "story" with the long story and
// anything else with "re: " and the text, so each reply names what it
// answers.
func storyOrEcho(req *llmtest.ChatRequest) llmtest.ServerReply {
	text := req.LastUserText()
	if strings.HasPrefix(text, "story") {
		return llmtest.ServerReply{Text: storyText}
	}
	return llmtest.ServerReply{Text: "re: " + text}
}

// endlessStory is the story twenty times over: at the tests' 20ms a chunk
// it streams for almost a minute, longer than any of their waits (retryFor
// is 30s). A test that does more between the reply's first text and the
// kill (sends asides, retries 409s) uses it, so the kill lands mid-stream
// however loaded the machine is; with storyText, which ends after about
// 2.5s, a slow machine let the reply finish first. The kill cuts it, so
// its length costs no time.
var endlessStory = strings.Repeat(storyText, 20)

// endlessStoryOrEcho is storyOrEcho with the endless story.
func endlessStoryOrEcho(req *llmtest.ChatRequest) llmtest.ServerReply {
	r := storyOrEcho(req)
	if r.Text == storyText {
		r.Text = endlessStory
	}
	return r
}

// TestSIGKILLMidStreamLosesNothingTwentyTimesOver kills the real program
// while it streams a reply, restarts it with default settings and checks
// through the API what a crash leaves: every user message, in order; the
// cut reply interrupted as soon as the server is back, never streaming;
// and a dialog that takes the next message at once (no wait for the dead
// server's lease) and answers it with the whole conversation. It logs the
// time from each kill to the next message accepted.
func TestSIGKILLMidStreamLosesNothingTwentyTimesOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the server 20 times")
	}
	t.Parallel()
	bin := parleyBinary(t)
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		t.Parallel()
		env["PARLEY_RATE_LIMIT_TENANT"], env["PARLEY_RATE_LIMIT_KEY"] = "off", "off"
		llm := chatServer(t, env, llmtest.Options{FragmentSize: 4, ChunkDelay: 20 * time.Millisecond, Handler: endlessStoryOrEcho})
		p := startProcess(t, bin, env)
		key, d := setupDialog(t, p.URL)
		var stored, seen []string // what the dialog must hold; what the model must have seen
		var recovery recoveries
		n := crashes[store.DialectSQLite]
		if env["PARLEY_DATABASE_URL"] != "" {
			n = crashes[store.DialectPostgres]
		}
		for i := range n {
			s, a, q := fmt.Sprintf("story %d", i), fmt.Sprintf("aside %d", i), fmt.Sprintf("question %d", i)
			killed := streamAndKill(t, p, key, d, s, a)
			p = p.restart(t)
			// The new server settled what the dead one left before it
			// listened: nothing reads streaming any more.
			checkStored(t, i, dialogMessages(t, p.URL, key, d), slices.Concat(stored, []string{"user:complete:" + s, "assistant:interrupted:", "user:queued:" + a}))
			// The aside was queued for the dead run; the next run takes it
			// into the conversation where it was sent.
			stored = append(stored, "user:complete:"+s, "assistant:interrupted:", "user:complete:"+a)

			var turn struct{ Done struct{ Text string } }
			err := apiclient.New(p.URL, key).Do(context.Background(), "POST", "/v1/tenants/acme/dialogs/"+d+"/messages", map[string]any{"text": q}, &turn)
			if err != nil || turn.Done.Text != "re: "+q {
				t.Fatalf("after crash %d the next message got %+v, %v; want a complete reply", i+1, turn, err)
			}
			recovery.add(t, i, killed)
			seen = append(seen, "user:"+s, "user:"+a, "user:"+q)
			if got := conversation(llm.LastRequest()); !slices.Equal(got, seen) {
				t.Fatalf("after crash %d the model saw\n%q\nwant every user message in order and no cut reply:\n%q", i+1, got, seen)
			}
			seen = append(seen, "assistant:re: "+q)
			stored = append(stored, "user:complete:"+q, "assistant:complete:re: "+q)
			checkStored(t, i, dialogMessages(t, p.URL, key, d), stored)
		}
		recovery.log(t, "kill to the next message accepted, restart included")
	})
}

// streamAndKill sends text over SSE, at the reply's first text sends
// aside (which the running reply takes in its queue), kills the server
// and says when.
func streamAndKill(t *testing.T, p *process, key, dialog, text, aside string) time.Time {
	t.Helper()
	resp := openStream(t, p.URL, key, dialog, text)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for {
		typ, ok := nextEvent(sc)
		if !ok {
			t.Fatalf("the stream of %q ended before any text", text)
		}
		if typ == "text_delta" {
			break
		}
	}
	turn, err := apiclient.New(p.URL, key).SendMessage(context.Background(), "acme", dialog, aside)
	if err != nil || !turn.Queued {
		t.Fatalf("an aside during the reply got %+v, %v; want it queued", turn, err)
	}
	killed := time.Now()
	p.kill()
	return killed
}

// recoveries are the times from a kill to the next message accepted.
type recoveries []time.Duration

func (r *recoveries) add(t *testing.T, i int, killed time.Time) {
	t.Helper()
	d := time.Since(killed)
	*r = append(*r, d)
	t.Logf("crash %d: the next message was accepted %s after the kill", i+1, d.Round(time.Millisecond))
}

// log reports the minimum, median and maximum.
func (r recoveries) log(t *testing.T, what string) {
	t.Helper()
	if len(r) == 0 {
		return
	}
	s := slices.Sorted(slices.Values(r))
	t.Logf("recovery over %d kills (%s): min %s, median %s, max %s", len(s), what,
		s[0].Round(time.Millisecond), s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// checkStored compares the dialog's messages with want, where an
// interrupted reply matches any beginning of the (endless) story: what was
// written before the kill.
func checkStored(t *testing.T, crash int, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		if prefix, cut := strings.CutPrefix(got[i], "assistant:interrupted:"); cut && want[i] == "assistant:interrupted:" {
			ok = strings.HasPrefix(endlessStory, prefix)
			continue
		}
		ok = got[i] == want[i]
	}
	if !ok {
		t.Fatalf("after crash %d the dialog holds\n%q\nwant\n%q", crash+1, got, want)
	}
}

// TestARetryWithItsIdempotencyKeyAfterACrashRunsTheTurnOnce: a request
// whose server was killed while it streamed the reply is retried with the
// same Idempotency-Key on the server that replaced it (default settings).
// The retry is not blocked and not refused: it answers the message the
// first try stored, which the dialog holds once, and the model is asked
// once more with it.
func TestARetryWithItsIdempotencyKeyAfterACrashRunsTheTurnOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the server")
	}
	t.Parallel()
	bin := parleyBinary(t)
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		t.Parallel()
		llm := chatServer(t, env, llmtest.Options{FragmentSize: 4, ChunkDelay: 20 * time.Millisecond, Handler: storyOrEcho})
		p := startProcess(t, bin, env)
		key, d := setupDialog(t, p.URL)
		first := openIdempotentStream(t, p.URL, key, d, "story once", "k-1")
		sc := bufio.NewScanner(first.Body)
		for typ, ok := nextEvent(sc); typ != "text_delta"; typ, ok = nextEvent(sc) {
			if !ok {
				t.Fatal("the stream ended before any text")
			}
		}
		p.kill()
		first.Body.Close()
		p = p.restart(t)

		retry := openIdempotentStream(t, p.URL, key, d, "story once", "k-1")
		defer retry.Body.Close()
		if retry.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("the retry replayed a response the dead server never stored")
		}
		var events []string
		for sc := bufio.NewScanner(retry.Body); ; {
			typ, ok := nextEvent(sc)
			if !ok {
				break
			}
			events = append(events, typ)
		}
		if !slices.Contains(events, "done") || slices.Contains(events, "error") {
			t.Fatalf("the retry's events %q; want the turn answered", events)
		}
		want := []string{"user:complete:story once", "assistant:interrupted:", "assistant:complete:" + storyText}
		checkStored(t, 0, dialogMessages(t, p.URL, key, d), want)
		if got := conversation(llm.LastRequest()); !slices.Equal(got, []string{"user:story once"}) {
			t.Fatalf("the retry showed the model %q; want the message once", got)
		}
	})
}

// openIdempotentStream posts a message with an Idempotency-Key, asking
// for SSE.
func openIdempotentStream(t *testing.T, base, key, dialog, text, idempotencyKey string) *http.Response {
	t.Helper()
	body := strings.NewReader(fmt.Sprintf(`{"text": %q}`, text))
	req, err := http.NewRequest("POST", base+"/v1/tenants/acme/dialogs/"+dialog+"/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Idempotency-Key", idempotencyKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("message: %d %s", resp.StatusCode, b)
	}
	return resp
}
