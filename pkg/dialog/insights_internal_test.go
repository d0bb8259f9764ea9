package dialog

import (
	"math"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestJudgeAppliesTheRulesInOrder(t *testing.T) {
	t.Parallel()
	user := func(id, text string) store.Message {
		return store.Message{ID: id, Kind: "user", Text: text, Status: store.MessageComplete}
	}
	reply := func(id string) store.Message {
		return store.Message{ID: id, Kind: "assistant", Text: "ok", Status: store.MessageComplete}
	}
	asked := []store.Message{user("m1", "where is my parcel"), reply("m2")}
	cases := []struct {
		name            string
		facts           store.DialogFacts
		verdict         store.Verdict
		msgs            []store.Message
		calls           []store.ToolCall
		ratings         []store.Feedback
		outcome, reason string
		unanswered      []string // reasons, one per user message
	}{
		{name: "an answered question is resolved", msgs: asked, outcome: OutcomeResolved, reason: reasonAnswered},
		{name: "a handoff wins over everything", facts: store.DialogFacts{HandedOff: true, RunFailures: 2}, verdict: store.Verdict{Rating: 1},
			msgs: asked, outcome: OutcomeHandedOff, reason: reasonHandoff, unanswered: []string{unansweredHandoff}},
		{name: "a failed run fails the dialog", facts: store.DialogFacts{RunFailures: 1}, msgs: asked[:1], outcome: OutcomeFailed, reason: reasonRunFailed},
		{name: "a rating of 2 fails it", verdict: store.Verdict{Rating: 2}, msgs: asked, outcome: OutcomeFailed, reason: reasonRatedDown,
			unanswered: []string{unansweredRatedDown}},
		{name: "a rating of 3 does not", verdict: store.Verdict{Rating: 3}, msgs: asked, outcome: OutcomeResolved, reason: reasonAnswered},
		{name: "a reply rated down fails it", msgs: asked, ratings: []store.Feedback{{MessageID: "m2", Rating: store.FeedbackDown}},
			outcome: OutcomeFailed, reason: reasonRatedDown, unanswered: []string{unansweredRatedDown}},
		{name: "a question asked again fails it", verdict: store.Verdict{CameBackIn: "dlg_later"}, msgs: asked, outcome: OutcomeFailed, reason: reasonCameBack},
		{name: "cannot_answer fails it", msgs: asked, calls: []store.ToolCall{{MessageID: "m2", Name: cannotAnswerTool}},
			outcome: OutcomeFailed, reason: reasonCannotAnswer, unanswered: []string{unansweredCannotAnswer}},
		{name: "a failed tool alone leaves it resolved but the question unanswered", msgs: asked,
			calls: []store.ToolCall{{MessageID: "m2", Name: "lookup", IsError: true}}, outcome: OutcomeResolved, reason: reasonAnswered,
			unanswered: []string{unansweredToolFailed}},
		{name: "no user message is abandoned", msgs: []store.Message{reply("m0")}, outcome: OutcomeAbandoned, reason: reasonNoMessage},
		{name: "a last question without a reply is abandoned", msgs: append(append([]store.Message{}, asked...), user("m3", "hello?")),
			outcome: OutcomeAbandoned, reason: reasonNoReply},
		{name: "a canceled reply is no reply", msgs: []store.Message{user("m1", "hi"), {ID: "m2", Kind: "assistant", Status: store.MessageCanceled}},
			outcome: OutcomeAbandoned, reason: reasonNoReply},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outcome, reason, un := judge(&tc.facts, tc.verdict, tc.msgs, tc.calls, tc.ratings)
			if outcome != tc.outcome || reason != tc.reason {
				t.Fatalf("judged %s (%s), want %s (%s)", outcome, reason, tc.outcome, tc.reason)
			}
			var got []string
			for _, u := range un {
				got = append(got, u.Reason)
			}
			if len(got) != len(tc.unanswered) {
				t.Fatalf("unanswered %v, want %v", got, tc.unanswered)
			}
			for i := range got {
				if got[i] != tc.unanswered[i] {
					t.Fatalf("unanswered %v, want %v", got, tc.unanswered)
				}
			}
		})
	}
}

func TestQuestionsGroupByTheirWords(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := []store.Unanswered{
		{DialogID: "d1", Text: "How do I return a tent?", Reason: unansweredHandoff, CreatedAt: at},
		{DialogID: "d2", Text: "Do you sell bicycles?", Reason: unansweredCannotAnswer, CreatedAt: at},
		{DialogID: "d3", Text: "return tent please", Reason: unansweredRatedDown, CreatedAt: at},
		{DialogID: "d3", Text: "How do I return a tent?", Reason: unansweredRatedDown, CreatedAt: at},
	}
	got := groupQuestions(rows)
	if len(got) != 2 {
		t.Fatalf("groups %+v", got)
	}
	tent := got[0]
	if tent.Count != 3 || tent.Question != "How do I return a tent?" || len(tent.Examples) != 2 ||
		len(tent.Dialogs) != 2 || tent.Reasons[unansweredRatedDown] != 2 {
		t.Errorf("tent group %+v", tent)
	}
	if got[1].Count != 1 || got[1].Question != "Do you sell bicycles?" {
		t.Errorf("bicycle group %+v", got[1])
	}
	if sameQuestionAs("Where is my order?", "Can I cancel my order?") {
		t.Error("two questions sharing one word are alike")
	}
}

func TestWilsonIntervals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		k, n      int64
		low, high float64
	}{
		{k: 50, n: 100, low: 0.4038, high: 0.5962},
		{k: 0, n: 30, low: 0, high: 0.1135},
		{k: 30, n: 30, low: 0.8865, high: 1},
	}
	for _, c := range cases {
		got := wilson(c.k, c.n)
		if math.Abs(got.Low-c.low) > 1e-4 || math.Abs(got.High-c.high) > 1e-4 {
			t.Errorf("wilson(%d, %d) = %+v, want [%v, %v]", c.k, c.n, got, c.low, c.high)
		}
	}
	if wilson(0, 0) != nil {
		t.Error("an interval of nothing")
	}
}
