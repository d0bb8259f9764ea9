package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// The inbox's waiting times reach analytics exactly: how long handed-off
// dialogs waited until an operator took them (mean and median, counted
// once per handoff however often it is taken again), and how long each
// message the visitor wrote during the handoff waited for the operator's
// answer (an operator message that answers nothing new counts nothing).
func TestHandoffWaitingTimesInAnalytics(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newInsightsEnv(t, st)
		ctx := context.Background()
		cl := e.client(e.key)
		answer := func(d, text string) {
			t.Helper()
			if _, err := cl.PostOperatorMessage(ctx, "shop", d, text); err != nil {
				t.Fatal(err)
			}
		}
		take := func(d string) {
			t.Helper()
			if _, err := cl.Assign(ctx, "shop", d, "Bob"); err != nil {
				t.Fatal(err)
			}
		}
		handOff := func(user string) string {
			d := e.start(t, user)
			e.say(t, d, "I want a person", scriptedCall("handoff_to_human", `{"reason":"asked"}`))
			return d
		}

		ann := handOff("ann")
		e.advance(45 * time.Second)
		take(ann) // waited 45 s
		take(ann) // the same operator again: no second take
		e.advance(20 * time.Second)
		answer(ann, "Hello, Bob here.") // the first response; it answers no message written during the handoff
		e.advance(10 * time.Second)
		e.say(t, ann, "Are you there?")
		e.advance(30 * time.Second)
		e.say(t, ann, "Hello?")
		e.advance(20 * time.Second)
		answer(ann, "Yes, sorry.") // 50 s after "Are you there?"
		e.advance(5 * time.Minute)
		answer(ann, "Anything else?") // answers nothing new
		e.say(t, ann, "No, thanks.")
		e.advance(2 * time.Minute)
		answer(ann, "Bye!") // 120 s

		ben := handOff("ben")
		e.advance(10 * time.Minute)
		answer(ben, "Hi, Bob here.") // taken by answering: waited 600 s

		cay := handOff("cay")
		e.advance(3 * time.Minute)
		take(cay) // 180 s

		a, err := cl.Analytics(ctx, "shop", apiclient.AnalyticsQuery{Bot: "helper"})
		if err != nil {
			t.Fatal(err)
		}
		// (45 + 600 + 180) s / 3; of 45 s, 180 s and 600 s the median is
		// in the bucket up to 5 min.
		if got := rate(a.HandoffTakeMS); !near(got, 275_000) {
			t.Errorf("handoff_take_ms %v, want 275000", got)
		}
		if got := rate(a.HandoffTakeP50MS); !near(got, 300_000) {
			t.Errorf("handoff_take_p50_ms %v, want 300000", got)
		}
		// (50 + 120) s / 2.
		if got := rate(a.OperatorReplyMS); !near(got, 85_000) {
			t.Errorf("operator_reply_ms %v, want 85000", got)
		}
		var takes, replies int64
		var takeMS, replyMS float64
		for _, p := range a.Series {
			if p.HandoffTakeMS != nil {
				takes++
				takeMS += *p.HandoffTakeMS
			}
			if p.OperatorReplyMS != nil {
				replies++
				replyMS += *p.OperatorReplyMS
			}
		}
		if takes == 0 || replies == 0 {
			t.Errorf("the series shows no waiting times: %+v", a.Series)
		}
		metrics := e.raw(t, "GET", "/metrics", "", "").body
		for _, want := range []string{"parley_handoff_wait_seconds_count 3", "parley_handoff_wait_seconds_sum 825",
			"parley_operator_reply_seconds_count 2", "parley_operator_reply_seconds_sum 170"} {
			if !strings.Contains(metrics, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		csv := e.raw(t, "GET", "/v1/tenants/shop/analytics?bot=helper&format=csv", e.key, "").body
		header := strings.SplitN(csv, "\n", 2)[0]
		for _, col := range []string{"handoff_take_ms", "handoff_take_p50_ms", "operator_reply_ms"} {
			if !strings.Contains(header, col) {
				t.Errorf("CSV header %q lacks %s", header, col)
			}
		}
	})
}
