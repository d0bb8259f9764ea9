package dialog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// recordFixture is a run record over a real dialog, with what its sink
// received so far.
type recordFixture struct {
	st     *store.Store
	d      *store.Dialog
	rec    *runRecord
	events []string
}

func (f *recordFixture) Send(e agent.Event) {
	if m, ok := e.(MessageEvent); ok {
		f.events = append(f.events, "message:"+m.Message.Text)
		return
	}
	f.events = append(f.events, e.Type())
}

// step is one transition, or a check, on a fixture.
type step struct {
	name string
	do   func(f *recordFixture) error
}

var bg = context.Background()

// takeLease takes the dialog's lease as a run does, storing the user's
// text "hi" and a reserved reply row with it when text is set.
func takeLease(text bool) step {
	return step{fmt.Sprintf("leased(text=%v)", text), func(f *recordFixture) error {
		take := store.Take{TenantID: f.d.TenantID, DialogID: f.d.ID, Owner: f.rec.owner, Now: time.Now(), TTL: time.Minute}
		if text {
			first, err := storeMessage(f.d, agent.Message{Kind: agent.KindUser, Message: llm.UserText("hi"), Time: time.Now()})
			if err != nil {
				return err
			}
			take.First = first
			take.Reply = &store.Message{Kind: string(agent.KindAssistant), Role: string(llm.RoleAssistant), CreatedAt: time.Now()}
		}
		d, err := f.st.Tenant(take.TenantID).Leases().Take(bg, take)
		if err != nil {
			return err
		}
		f.d = d
		return f.rec.leased(d, take.Reply)
	}}
}

// leasedAgain is leased called a second time, for a dialog as the run
// already holds it.
var leasedAgain = step{"leased again", func(f *recordFixture) error {
	return f.rec.leased(f.d, &store.Message{Seq: 99})
}}

func text(s string) step {
	return step{"textStreamed(" + s + ")", func(f *recordFixture) error { return f.rec.textStreamed(bg, s) }}
}

// reply is the loop's complete reply, with a tool call or not, and its
// message event.
func reply(s string, calls bool) step {
	return step{fmt.Sprintf("completed(%s, calls=%v)", s, calls), func(f *recordFixture) error {
		m := agent.Message{Kind: agent.KindAssistant, Message: llm.AssistantText(s), Time: time.Now()}
		row, err := storeMessage(f.d, m)
		if err != nil {
			return err
		}
		if err := f.rec.completed(bg, row, calls); err != nil {
			return err
		}
		return f.rec.announced(row, MessageEvent{Message: messageView(row)})
	}}
}

var (
	nextMessage = step{"nextMessage", func(f *recordFixture) error { return f.rec.nextMessage(bg) }}
	rowComing   = step{"rowComing", func(f *recordFixture) error { return f.rec.rowComing(bg) }}
	loopEnded   = step{"loopEnded", func(f *recordFixture) error { return f.rec.loopEnded(bg, store.MessageInterrupted) }}
	done        = step{"emit(done)", func(f *recordFixture) error { f.rec.emit(agent.Done{}); return nil }}
	end         = step{"end", func(f *recordFixture) error { return f.rec.end(bg) }}
)

func save(release bool) step {
	return step{fmt.Sprintf("save(release=%v)", release), func(f *recordFixture) error {
		_, err := f.rec.save(bg, store.DialogActive, "{}", release)
		return err
	}}
}

// lostSave is a save after another process took the lease over (here:
// after the lease row went): a conflict that writes nothing.
var lostSave = step{"save after the lease was lost", func(f *recordFixture) error {
	if err := f.st.Tenant(f.d.TenantID).Leases().Release(bg, f.d.ID, f.rec.owner); err != nil {
		return err
	}
	if _, err := f.rec.save(bg, store.DialogActive, "{}", true); !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("save without the lease: %v, want a conflict", err)
	}
	return nil
}}

// inPhase checks the record's phases midway.
func inPhase(lease leasePhase, reply replyPhase) step {
	return step{fmt.Sprintf("in phase %s/%s", lease, reply), func(f *recordFixture) error {
		if got := f.rec.leasePhase(); got != lease || f.rec.reply != reply {
			return fmt.Errorf("phase %s/%s, want %s/%s", got, f.rec.reply, lease, reply)
		}
		return nil
	}}
}

// sent checks the events the sink received so far.
func sent(want ...string) step {
	return step{fmt.Sprintf("sent %q", want), func(f *recordFixture) error {
		if !slices.Equal(f.events, want) {
			return fmt.Errorf("the sink got %q, want %q", f.events, want)
		}
		return nil
	}}
}

// TestRunRecordTransitions drives a run's record through its transitions
// on a real dialog and checks the phases they leave, the rows and lease
// they leave in the store, the events they let go, and that a transition
// out of turn is refused without writing anything.
func TestRunRecordTransitions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		steps []step
		// refused are the steps (by index) that must be refused.
		refused []int
		lease   leasePhase
		reply   replyPhase
		// rows are the dialog's messages as kind:status:text.
		rows []string
		// leaseRow says the lease is still stored.
		leaseRow bool
	}{
		{name: "a streamed reply is held, its events wait for the save that writes it and releases the lease",
			steps: []step{takeLease(true), text("Hel"), text("lo"), reply("Hello", false), done, sent(),
				loopEnded, save(true), sent("message:Hello", "done")},
			lease: leaseReleased, reply: replyNone, rows: []string{"user:complete:hi", "assistant:complete:Hello"}},
		{name: "a reply with tool calls is written at once and announced at once",
			steps: []step{takeLease(true), reply("Let me look.", true), sent("message:Let me look.")},
			lease: leaseHeld, reply: replyNone, rows: []string{"user:complete:hi", "assistant:complete:Let me look."}, leaseRow: true},
		{name: "the reserved row is deleted when the loop ends without a reply",
			steps: []step{takeLease(true), loopEnded},
			lease: leaseHeld, reply: replyNone, rows: []string{"user:complete:hi"}, leaseRow: true},
		{name: "the reserved row is deleted when another row must come first",
			steps: []step{takeLease(true), rowComing},
			lease: leaseHeld, reply: replyNone, rows: []string{"user:complete:hi"}, leaseRow: true},
		{name: "a reply the loop did not complete is left interrupted with the text that came",
			steps: []step{takeLease(true), text("Hal"), text("f"), loopEnded},
			lease: leaseHeld, reply: replyNone, rows: []string{"user:complete:hi", "assistant:interrupted:Half"}, leaseRow: true},
		{name: "a streaming reply stays where it is when another row comes",
			steps: []step{takeLease(true), text("Hal"), rowComing},
			lease: leaseHeld, reply: replyStreaming, rows: []string{"user:complete:hi", "assistant:streaming:"}, leaseRow: true},
		{name: "a held reply is written, and its events go, before the next message",
			steps: []step{takeLease(true), reply("A", false), done, nextMessage, sent("message:A", "done"), rowComing},
			lease: leaseHeld, reply: replyNone, rows: []string{"user:complete:hi", "assistant:complete:A"}, leaseRow: true},
		{name: "text after a held reply writes it, then streams into a row of its own",
			steps: []step{takeLease(true), reply("A", false), text("B"), sent("message:A")},
			lease: leaseHeld, reply: replyStreaming, rows: []string{"user:complete:hi", "assistant:complete:A", "assistant:streaming:"}, leaseRow: true},
		{name: "without a reserved row a reply is appended whole",
			steps: []step{takeLease(false), reply("A", false), sent("message:A")},
			lease: leaseHeld, reply: replyNone, rows: []string{"assistant:complete:A"}, leaseRow: true},
		{name: "without a reserved row the first text stores a streaming row",
			steps: []step{takeLease(false), text("A")},
			lease: leaseHeld, reply: replyStreaming, rows: []string{"assistant:streaming:"}, leaseRow: true},
		{name: "end releases the lease and deletes the reserved row of a run that failed before its loop",
			steps: []step{takeLease(true), end},
			lease: leaseEnded, reply: replyNone, rows: []string{"user:complete:hi"}},
		{name: "a save that does not release keeps the lease; end releases it",
			steps: []step{takeLease(true), reply("A", false), loopEnded, save(false), sent("message:A"), end},
			lease: leaseEnded, reply: replyNone, rows: []string{"user:complete:hi", "assistant:complete:A"}},
		{name: "a save that finds the lease lost writes nothing, and lets the held events go but the reply's own",
			steps: []step{takeLease(true), reply("A", false), done, loopEnded, lostSave, inPhase(leaseHeld, replyNone), sent("done"), end},
			lease: leaseEnded, reply: replyNone, rows: []string{"user:complete:hi", "assistant:streaming:"}},

		{name: "the lease is taken once",
			steps: []step{takeLease(true), leasedAgain}, refused: []int{1},
			lease: leaseHeld, reply: replyReserved, rows: []string{"user:complete:hi", "assistant:streaming:"}, leaseRow: true},
		{name: "no row and no reply is written before a held reply",
			steps: []step{takeLease(true), reply("A", false), rowComing, reply("B", false), sent()}, refused: []int{2, 3},
			lease: leaseHeld, reply: replyHeld, rows: []string{"user:complete:hi", "assistant:streaming:"}, leaseRow: true},
		{name: "no save while a reply still streams",
			steps: []step{takeLease(true), text("x"), save(true)}, refused: []int{2},
			lease: leaseHeld, reply: replyStreaming, rows: []string{"user:complete:hi", "assistant:streaming:"}, leaseRow: true},
		{name: "no save while the reserved row waits",
			steps: []step{takeLease(true), save(true)}, refused: []int{1},
			lease: leaseHeld, reply: replyReserved, rows: []string{"user:complete:hi", "assistant:streaming:"}, leaseRow: true},
		{name: "nothing writes before the lease",
			steps: []step{text("x"), nextMessage, rowComing, reply("A", false), loopEnded, save(true)}, refused: []int{0, 1, 2, 3, 4, 5},
			lease: leaseNone, reply: replyNone},
		{name: "nothing but end once the last save gave the lease up",
			steps:   []step{takeLease(true), loopEnded, save(true), text("x"), nextMessage, rowComing, reply("A", false), loopEnded, save(true), leasedAgain, end},
			refused: []int{3, 4, 5, 6, 7, 8, 9},
			lease:   leaseEnded, reply: replyNone, rows: []string{"user:complete:hi"}},
		{name: "nothing at all once ended",
			steps:   []step{takeLease(true), end, end, text("x"), nextMessage, reply("A", false), save(true), leasedAgain},
			refused: []int{2, 3, 4, 5, 6, 7},
			lease:   leaseEnded, reply: replyNone, rows: []string{"user:complete:hi"}},
	}
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		tn := &store.Tenant{Slug: "t", Name: "T"}
		if err := st.Tenants().Create(bg, tn); err != nil {
			t.Fatal(err)
		}
		bot := &store.Bot{TenantID: tn.ID, Slug: "b", Name: "B"}
		if err := st.Tenant(bot.TenantID).Bots().Create(bg, bot); err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel() // each case has a dialog of its own
				d := &store.Dialog{TenantID: tn.ID, BotID: bot.ID, VersionNumber: 1, Context: "{}"}
				if err := st.Tenant(d.TenantID).Dialogs().Create(bg, d); err != nil {
					t.Fatal(err)
				}
				f := &recordFixture{st: st, d: d}
				f.rec = newRunRecord(st, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, "owner-1")
				f.rec.sink = f
				for i, s := range tc.steps {
					err := s.do(f)
					var refused *transitionError
					switch {
					case slices.Contains(tc.refused, i) && !errors.As(err, &refused):
						t.Fatalf("step %d %s was not refused: %v", i, s.name, err)
					case !slices.Contains(tc.refused, i) && err != nil:
						t.Fatalf("step %d %s: %v", i, s.name, err)
					}
				}
				if got := f.rec.leasePhase(); got != tc.lease {
					t.Errorf("lease %s, want %s", got, tc.lease)
				}
				if f.rec.reply != tc.reply {
					t.Errorf("reply %s, want %s", f.rec.reply, tc.reply)
				}
				msgs, err := st.Tenant(d.TenantID).Messages().List(bg, d.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				var rows []string
				for _, m := range msgs {
					rows = append(rows, m.Kind+":"+m.Status+":"+m.Text)
				}
				if !slices.Equal(rows, tc.rows) {
					t.Errorf("rows %q, want %q", rows, tc.rows)
				}
				_, err = st.Tenant(d.TenantID).Leases().Get(bg, d.ID)
				if held := err == nil; held != tc.leaseRow {
					t.Errorf("lease stored %v (%v), want %v", held, err, tc.leaseRow)
				}
			})
		}
	})
}
