package main

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

const (
	// failovers is how many times the failover test kills the server
	// answering the dialog, alternating between the two.
	failovers = 6
	// asides is how many texts each round sends while the reply streams.
	asides = 6
)

// TestWhenTheServerAnsweringADialogDiesTheOtherTakesOverWithNothingLost
// runs two servers on one PostgreSQL, with default settings. While one
// streams a reply, texts sent to either end up queued behind that reply
// (the other answers 409 and the client retries); then that server is
// killed. The other server answers the next message as soon as the dead
// one is gone, long before its lease would expire, with every text of the
// round in the conversation in the order stored. It logs the time from
// each kill to the next message accepted.
func TestWhenTheServerAnsweringADialogDiesTheOtherTakesOverWithNothingLost(t *testing.T) {
	t.Parallel()
	log := &modelLog{fake: llmtest.NewHandler(llmtest.Options{APIKey: "sk-e2e", FragmentSize: 4,
		ChunkDelay: 20 * time.Millisecond, Handler: endlessStoryOrEcho})}
	servers := startPair(t, log, parleyEnv{})
	key, d := setupDialog(t, servers[0].URL)
	var before []string // the dialog's messages before the round
	var recovery recoveries
	for round := range failovers {
		owner, survivor := round%2, (round+1)%2
		s, q := fmt.Sprintf("story %d", round), fmt.Sprintf("question %d", round)
		resp := openStream(t, servers[owner].URL, key, d, s)
		sc := bufio.NewScanner(resp.Body)
		for typ, ok := nextEvent(sc); typ != "text_delta"; typ, ok = nextEvent(sc) {
			if !ok {
				t.Fatalf("round %d: the stream ended before any text", round)
			}
		}
		sent := sendAsides(t, servers, owner, key, d, round)
		killed := time.Now()
		servers[owner].kill()
		resp.Body.Close()
		_, refused, err := sendUntilAccepted(servers[survivor:survivor+1], 0, key, d, q)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		recovery.add(t, round, killed)
		t.Logf("round %d: the survivor refused the question %d times first", round, refused)
		servers[owner] = servers[owner].restart(t)

		msgs := dialogMessages(t, servers[survivor].URL, key, d)
		checkFailover(t, round, before, msgs, s, q, sent)
		var stored []string
		for _, m := range msgs {
			if kind, text, ok := cutStatus(m, "complete"); ok {
				stored = append(stored, kind+":"+text)
			}
		}
		stored = stored[:len(stored)-1] // the answer to what the model saw
		if seen := conversation(log.fake.LastRequest()); !slices.Equal(seen, stored) {
			t.Fatalf("round %d: the model saw\n%q\nbut the dialog stores before its answer\n%q", round, seen, stored)
		}
		before = msgs
	}
	recovery.log(t, "kill to the next message accepted by the other server")
}

// sendAsides sends the round's asides at once, alternating servers and
// retrying 409s, and returns them as stored messages should read.
func sendAsides(t *testing.T, servers []*process, owner int, key, dialog string, round int) []string {
	t.Helper()
	out := make([]string, asides)
	errs := make([]error, asides)
	var wg sync.WaitGroup
	for i := range asides {
		out[i] = fmt.Sprintf("user:complete:aside %d.%d", round, i)
		wg.Go(func() {
			_, _, errs[i] = sendUntilAccepted(servers, owner+i, key, dialog, fmt.Sprintf("aside %d.%d", round, i))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	return out
}

// checkFailover checks what one round added after before: the story, its
// reply cut by the kill, the asides in some order, the question and its
// complete answer.
func checkFailover(t *testing.T, round int, before, msgs []string, story, question string, asides []string) {
	t.Helper()
	n := len(asides)
	if len(msgs) != len(before)+n+4 || !slices.Equal(msgs[:len(before)], before) {
		t.Fatalf("round %d: the dialog holds\n%q\nwant the %d messages before it and %d more", round, msgs, len(before), n+4)
	}
	added := msgs[len(before):]
	_, cut, interrupted := cutStatus(added[1], "interrupted")
	got := slices.Sorted(slices.Values(added[2 : 2+n]))
	if added[0] != "user:complete:"+story || !interrupted || !strings.HasPrefix(endlessStory, cut) ||
		!slices.Equal(got, slices.Sorted(slices.Values(asides))) ||
		added[2+n] != "user:complete:"+question || added[3+n] != "assistant:complete:re: "+question {
		t.Fatalf("round %d added\n%q\nwant the story, its interrupted reply, the asides, the question and its answer", round, added)
	}
}

// cutStatus splits a "kind:status:text" message with the given status.
func cutStatus(m, status string) (kind, text string, ok bool) {
	kind, rest, _ := strings.Cut(m, ":")
	text, ok = strings.CutPrefix(rest, status+":")
	return kind, text, ok
}
