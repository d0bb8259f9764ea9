package dialog_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// TestHistoryAcrossProcesses: a process keeps a dialog's history between
// turns, but a turn another process answered meanwhile (on the same
// database) is part of what the model sees next, in order.
func TestHistoryAcrossProcesses(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		other := e.otherProcess(t)
		d := e.dialog(t)
		var want []string
		for i, rt := range []*dialog.Runtime{e.rt, other, e.rt, e.rt, other} {
			text, reply := fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)
			e.llm.Enqueue(llmtest.ServerReply{Text: reply})
			if _, err := rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: text}, nil); err != nil {
				t.Fatal(err)
			}
			want = append(want, "user:"+text)
			var seen []string
			for _, m := range e.llm.LastRequest().Messages[1:] { // after the system prompt
				seen = append(seen, m.Role+":"+m.Text())
			}
			if !slices.Equal(seen, want) {
				t.Fatalf("turn %d: the model saw %q, want %q", i, seen, want)
			}
			want = append(want, "assistant:"+reply)
		}
	})
}

// TestWarmTurnsReadNoHistory: a new dialog's first turn has no history
// to read, and once a process has answered a dialog, its next turns do not
// read the conversation again, so the platform's cost per turn stays flat
// as the conversation grows. Only a turn after another process answered
// reads it, once.
func TestWarmTurnsReadNoHistory(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		other := e.otherProcess(t)
		d := e.dialog(t)
		var reads atomic.Int32
		watchStatements(e.store.DB(), func(sql string) {
			if strings.Contains(sql, "FROM messages") {
				reads.Add(1)
			}
		})
		for i, rt := range []*dialog.Runtime{other, e.rt, e.rt, e.rt, e.rt, e.rt} {
			e.llm.Enqueue(llmtest.ServerReply{Text: "fine"})
			if _, err := rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "and now?"}, nil); err != nil {
				t.Fatal(err)
			}
			if want := min(i, 1); int(reads.Load()) != want {
				t.Fatalf("after turn %d the history was read %d times, want %d", i+1, reads.Load(), want)
			}
		}
	})
}
