package platform_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
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
			_, errs[i] = e.rt.SendMessage(ctx, e.admin, "shop", dialogID, platform.SendInput{Text: fmt.Sprintf("message %d", i)}, nil)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestMessagesArrivingTogetherAreEachStoredOnceAndAnswered(t *testing.T) {
	forEachRuntime(t, platform.Limits{}, func(t *testing.T, e *rtEnv) {
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
	forEachRuntime(t, platform.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		ok, err := e.store.AcquireLease(ctx, e.tenant.ID, d.ID, "another-process", e.clock.Now(), time.Hour)
		if err != nil || !ok {
			t.Fatalf("acquire lease: %v, %v", ok, err)
		}
		for _, err := range e.sendAll(d.ID) {
			wantCode(t, err, platform.CodeConflict)
		}
		if h := e.history(t, d.ID); len(h) != 0 {
			t.Fatalf("refused messages were stored, never to be answered: %q", h)
		}
	})
}
