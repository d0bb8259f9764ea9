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

// An operator's first message after a handoff times the dialog's
// operator first response, once per handoff: later messages do not
// count, a second handoff of the same dialog counts again.
func TestOperatorFirstResponseTimeInAnalytics(t *testing.T) {
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

		d := e.start(t, "ann")
		e.say(t, d, "I want a person", scriptedCall("handoff_to_human", `{"reason":"asked"}`))
		e.advance(90 * time.Second)
		answer(d, "Hello, Bob here.")
		e.advance(10 * time.Minute)
		answer(d, "Anything else?")

		other := e.start(t, "ben")
		e.say(t, other, "Let me talk to someone", scriptedCall("handoff_to_human", `{"reason":"asked"}`))
		e.advance(30 * time.Second)
		answer(other, "Hi, Carla here.")

		a, err := cl.Analytics(ctx, "shop", apiclient.AnalyticsQuery{Bot: "helper"})
		if err != nil {
			t.Fatal(err)
		}
		// (90 s + 30 s) / 2: the second message in the first dialog is no first answer.
		if got := rate(a.OperatorFirstResponseMS); !near(got, 60_000) {
			t.Fatalf("operator_first_response_ms %v, want 60000", got)
		}
		metrics := e.raw(t, "GET", "/metrics", "", "").body
		for _, want := range []string{"parley_operator_first_response_seconds_count 2", "parley_operator_first_response_seconds_sum 120"} {
			if !strings.Contains(metrics, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		csv := e.raw(t, "GET", "/v1/tenants/shop/analytics?bot=helper&format=csv", e.key, "").body
		if !strings.Contains(strings.SplitN(csv, "\n", 2)[0], "operator_first_response_ms") {
			t.Errorf("CSV header %q lacks operator_first_response_ms", strings.SplitN(csv, "\n", 2)[0])
		}
	})
}
