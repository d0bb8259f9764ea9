package dialog_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// burstSize is how many messages the join tests send to one dialog at once.
const burstSize = 12

// sendAll sends burstSize distinct texts to the dialog at once and returns
// each one's error.
func (e *rtEnv) sendAll(dialogID string) []error {
	errs := make([]error, burstSize)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range burstSize {
		wg.Go(func() {
			<-start
			_, errs[i] = e.rt.SendMessage(ctx, e.admin, "shop", dialogID, dialog.SendInput{Text: fmt.Sprintf("message %d", i)}, nil)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestMessagesArrivingTogetherAreEachStoredOnceAndAnswered(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		for range burstSize {
			e.llm.Enqueue(llmtest.ServerReply{Text: "noted"})
		}
		d := e.dialog(t)
		for i, err := range e.sendAll(d.ID) {
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		count := map[string]int{}
		for _, m := range e.history(t, d.ID) {
			count[m]++
		}
		for i := range burstSize {
			if m := fmt.Sprintf("user:complete:message %d", i); count[m] != 1 {
				t.Errorf("%q is stored %d times, want once", m, count[m])
			}
		}
		if len(count) > burstSize+1 {
			t.Fatalf("the dialog holds more than the messages and their answers: %q", e.history(t, d.ID))
		}
	})
}

func TestMessagesMeetingAnotherProcesssLeaseAreRefusedNotQueued(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		ok, err := e.store.Tenant(e.tenant.ID).Leases().Acquire(ctx, d.ID, "another-process", e.clock.Now(), time.Hour)
		if err != nil || !ok {
			t.Fatalf("acquire lease: %v, %v", ok, err)
		}
		for _, err := range e.sendAll(d.ID) {
			wantCode(t, err, platform.CodeConflict)
			if dialog.RetryAfter(err) <= 0 {
				t.Fatalf("the conflict of a busy dialog says not when to retry: %v", err)
			}
		}
		if h := e.history(t, d.ID); len(h) != 0 {
			t.Fatalf("refused messages were stored, never to be answered: %q", h)
		}
	})
}

func TestATextQueuedForARunThatDiedJoinsTheNextReply(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		// What a process leaves behind when it dies with a text queued for
		// its run: the row, and no one to take it.
		orphan := &store.Message{TenantID: e.tenant.ID, DialogID: d.ID, Kind: "user", Role: "user",
			Content: `[{"type":"text","text":"are you there?"}]`, Text: "are you there?", Status: store.MessageQueued}
		if err := e.store.Tenant(orphan.TenantID).Messages().Append(ctx, orphan); err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{Text: "Yes, and here is the answer."})
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hello?"}, nil); err != nil {
			t.Fatal(err)
		}
		want := []string{"user:complete:are you there?", "user:complete:hello?", "assistant:complete:Yes, and here is the answer."}
		if h := e.history(t, d.ID); !slices.Equal(h, want) {
			t.Fatalf("history %q, want %q", h, want)
		}
		var seen []string
		for _, m := range e.llm.LastRequest().Messages {
			if m.Role == "user" {
				seen = append(seen, m.Text())
			}
		}
		if !slices.Equal(seen, []string{"are you there?", "hello?"}) {
			t.Fatalf("the model saw the user texts %q, want both in order", seen)
		}
	})
}

// TestARetryOfATextItsDeadFirstTryStoredAnswersItOnce: a request whose
// server died after storing its text (under the id its Idempotency-Key
// claimed) is retried with that id. The retry answers the stored text; it
// neither stores it again nor shows it to the model twice.
func TestARetryOfATextItsDeadFirstTryStoredAnswersItOnce(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		id := store.NewID(store.PrefixMessage)
		// What the first try left: its text and the reply it streamed into,
		// under a lease that has run out (or whose server is known dead).
		if _, err := e.store.Tenant(e.tenant.ID).Leases().Take(ctx, store.Take{TenantID: e.tenant.ID, DialogID: d.ID, Owner: "dead-process",
			Now: e.clock.Now().Add(-time.Hour), TTL: time.Minute,
			First: &store.Message{ID: id, Kind: "user", Role: "user", Content: `[{"type":"text","text":"where is A7?"}]`, Text: "where is A7?"},
			Reply: &store.Message{Kind: "assistant", Role: "assistant"}}); err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{Text: "A7 shipped."})
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "where is A7?", MessageID: id}, nil)
		if err != nil || turn.Done == nil || turn.Done.Text != "A7 shipped." {
			t.Fatalf("turn %+v, %v", turn, err)
		}
		want := []string{"user:complete:where is A7?", "assistant:interrupted:", "assistant:complete:A7 shipped."}
		if h := e.history(t, d.ID); !slices.Equal(h, want) {
			t.Fatalf("history %q, want %q", h, want)
		}
		var seen []string
		for _, m := range e.llm.LastRequest().Messages[1:] {
			seen = append(seen, m.Role+":"+m.Text())
		}
		if !slices.Equal(seen, []string{"user:where is A7?"}) {
			t.Fatalf("the model saw %q, want the text once", seen)
		}
	})
}
