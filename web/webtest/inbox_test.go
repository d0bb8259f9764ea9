package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestTheInboxShowsWhyAndKeepsInternalNotesFromTheVisitor opens a handed-off
// dialog in the inbox: the list shows its reason, last message, waiting
// time and holder, filtered to mine or unassigned; the handoff's reason
// and summary head the conversation, a note the operator writes is there for the team after a
// reload, and the visitor, whose widget reads the same dialog, never sees
// it.
func TestTheInboxShowsWhyAndKeepsInternalNotesFromTheVisitor(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, visitor context.Context) {
		operator := tab(t, visitor)
		site := w.site(t)
		key := w.widgetKey(t, site.URL)
		const note = "Refund already promised by phone; do not offer a voucher."

		run(t, visitor, "ask for a person",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			send("I want to talk to a person"),
			until(contains(shadow, ".note", "Connecting you to a person")),
		)
		run(t, operator, "sign in", w.signInWithKey()...)

		t.Run("the list shows why it waits, its last words and since when; filters pick mine or unassigned", func(t *testing.T) {
			run(t, operator, "the list",
				do(`location.hash = '#/t/acme/inbox'`),
				until(contains("document", ".inbox-list .inbox-reason", "the visitor asked for a person")),
				until(contains("document", ".inbox-list .inbox-last", "I want to talk to a person")),
				until(`/^waiting \d+ (s|min|h)$/.test(document.querySelector('.inbox-list .inbox-wait').textContent)`),
				click(`document.querySelector('.inbox-filters [data-filter="mine"]')`),
				until(contains("document", ".inbox-list", "No dialog matches this filter.")),
				click(`document.querySelector('.inbox-filters [data-filter="unassigned"]')`),
				until(`document.querySelectorAll('.inbox-list .inbox-item').length === 1`),
			)
		})

		t.Run("the reason and summary head the conversation", func(t *testing.T) {
			run(t, operator, "open the dialog",
				do(`location.hash = '#/t/acme/inbox'`),
				until(`document.querySelector('.inbox-list a') !== null`),
				click(`document.querySelector('.inbox-list a')`),
				until(contains("document", ".inbox-detail .handoff-banner .handoff-reason", "the visitor asked for a person")),
				until(contains("document", ".inbox-detail .handoff-banner .handoff-summary", "Order 1042 arrived damaged")),
			)
			// The banner comes before the transcript, not inside it.
			if !eval[bool](t, operator, `!!(document.querySelector('.handoff-banner').compareDocumentPosition(document.querySelector('.transcript')) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
				t.Fatal("the handoff banner is not above the transcript")
			}
		})

		t.Run("a note is kept for the team", func(t *testing.T) {
			run(t, operator, "write a note",
				until(contains("document", ".notes", "No notes yet.")),
				do(`document.querySelector('.note-form textarea').value = `+js(note)),
				click(`document.querySelector('.note-form button[type="submit"]')`),
				until(contains("document", ".notes li.internal-note", note)),
				until(`document.querySelector('.note-form textarea').value === ''`),
				chromedp.Reload(),
				until(contains("document", ".notes li.internal-note", note)),
			)
		})

		t.Run("a canned reply is kept and inserted by its shortcut", func(t *testing.T) {
			run(t, operator, "add a canned reply",
				do(`document.querySelector('details.canned').open = true`),
				until(contains("document", "details.canned", "None yet.")),
				do(`document.querySelector('.canned-form input[name="shortcut"]').value = 'hello'`),
				do(`document.querySelector('.canned-form textarea[name="text"]').value = 'Hi, a person here.'`),
				click(`document.querySelector('.canned-form button[type="submit"]')`),
				until(contains("document", ".canned-list li[data-shortcut='hello']", "Hi, a person here.")),
				click(`Array.from(document.querySelectorAll('.inbox-detail button')).find(b => b.textContent === 'Take')`),
				until(`document.querySelector('.reply-form textarea') !== null`),
				do(`document.querySelector('.reply-form textarea').focus()`),
				chromedp.KeyEvent("/he"),
				until(contains("document", ".canned-offers", "/hello")),
				click(`document.querySelector('.canned-offers button')`),
				until(`document.querySelector('.reply-form textarea').value === 'Hi, a person here.'`),
			)
		})

		t.Run("the visitor never sees the note", func(t *testing.T) {
			run(t, operator, "reply",
				click(`document.querySelector('.reply-form button[type="submit"]')`),
				until(contains("document", ".transcript", "Hi, a person here.")),
				until(contains("document", ".inbox-list", "No dialog matches this filter.")), // unassigned: taken now
				click(`document.querySelector('.inbox-filters [data-filter="mine"]')`),
				until(contains("document", ".inbox-list .inbox-holder", "yours")),
				until(contains("document", ".inbox-list .inbox-last", "Hi, a person here.")),
			)
			screenshot(t, operator, "inbox")
			// The widget reads the whole dialog again: the history it is given
			// holds the operator's reply and no note.
			run(t, visitor, "reload the widget",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.operator", "Hi, a person here.")),
			)
			if eval[bool](t, visitor, shadow+`.textContent.includes('Refund already promised')`) {
				t.Fatal("the visitor's widget shows the operators' internal note")
			}
		})
	})
}

// TestALeadAssignsAHandedOffDialogToAnOperator has an admin open a waiting
// dialog, whose visitor panel links the visitor's earlier dialog, and give
// it to an operator of the team from the inbox: the list then shows
// the operator holding it, and the audit log says who assigned it.
func TestALeadAssignsAHandedOffDialogToAnOperator(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		if _, err := w.svc.Users().Create(bg, op, operatorEmail, operatorPassword); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Members().Add(bg, op, "acme", operatorEmail, auth.RoleOperator); err != nil {
			t.Fatal(err)
		}
		earlier := w.talk(t, "u-assign", "hello")
		id := w.talk(t, "u-assign", "I want to talk to a person")
		run(t, ctx, "sign in", w.signInWithKey()...)
		run(t, ctx, "the visitor's panel links their earlier dialog",
			do(`location.hash = '#/t/acme/inbox/' + `+js(id)),
			until(contains("document", ".visitor", "u-assign")),
			until(`document.querySelector('.visitor-dialogs a[href$="/dialogs/' + `+js(earlier)+` + '"]') !== null`),
			until(`document.querySelectorAll('.visitor-dialogs a').length === 1`),
		)
		run(t, ctx, "assign to ada",
			do(`location.hash = '#/t/acme/inbox/' + `+js(id)),
			until(`document.querySelector('.inbox-detail select[name="member"]') !== null`),
			do(`document.querySelector('.inbox-detail select[name="member"]').value = Array.from(document.querySelectorAll('.inbox-detail select[name="member"] option')).find(o => o.textContent === `+js(operatorEmail)+`).value`),
			click(`Array.from(document.querySelectorAll('.inbox-detail button')).find(b => b.textContent === 'Assign')`),
			until(contains("document", ".inbox-list .inbox-holder", "ada")),
			until(contains("document", ".inbox-detail", "ada has taken this dialog.")),
		)
		entries, _, err := w.svc.AuditLog().List(bg, op, "acme", platform.AuditFilter{Action: platform.AuditDialogAssigned}, platform.ListOptions{})
		if err != nil || len(entries) != 1 || entries[0].Target != id || !strings.Contains(string(entries[0].Detail), operatorEmail) {
			t.Fatalf("audit log of the assignment: %+v, %v", entries, err)
		}
	})
}

// TestTheInboxWorksFromTheKeyboardAndAnnouncesNewDialogs moves through the
// inbox with j and k, takes a dialog with a, goes to the reply box with r
// and shows the keys with ?; a dialog handed off while the page is open is
// announced on the page.
func TestTheInboxWorksFromTheKeyboardAndAnnouncesNewDialogs(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		first := w.talk(t, "u-first", "I want to talk to a person")
		second := w.talk(t, "u-second", "I want to talk to a person")
		run(t, ctx, "sign in", w.signInWithKey()...)
		// at is the dialog open and the list drawn, marking it, so the next
		// key moves on from it.
		at := func(id string) string {
			return `location.hash.endsWith('/inbox/' + ` + js(id) + `) && document.querySelector('.inbox-item.current[data-dialog=' + JSON.stringify(` + js(id) + `) + ']') !== null`
		}
		run(t, ctx, "keys",
			do(`localStorage.setItem('parley.inbox.filter', 'all'); location.hash = '#/t/acme/inbox'`),
			until(`document.querySelectorAll('.inbox-list .inbox-item').length === 2`),
			chromedp.KeyEvent("?"),
			until(`!document.querySelector('.shortcut-help').hidden`),
			chromedp.KeyEvent("j"),
			until(at(first)),
			until(`document.querySelector('.inbox-detail button[data-action="take"]') !== null`),
			chromedp.KeyEvent("j"),
			until(at(second)),
			until(`document.querySelector('.inbox-detail button[data-action="take"]') !== null`),
			chromedp.KeyEvent("k"),
			until(at(first)),
			until(`document.querySelector('.inbox-detail button[data-action="take"]') !== null`),
			chromedp.KeyEvent("a"),
			until(`document.querySelector('.reply-form textarea') !== null`),
			until(contains("document", ".inbox-list .inbox-item.current .inbox-holder", "yours")),
			chromedp.KeyEvent("r"),
			until(`document.activeElement === document.querySelector('.reply-form textarea')`),
		)
		if !eval[bool](t, ctx, `document.querySelector('.inbox-notice').hidden`) {
			t.Fatal("the page announces a new dialog before any arrived")
		}
		w.talk(t, "u-third", "I want to talk to a person")
		run(t, ctx, "the new dialog is announced",
			until(contains("document", ".inbox-notice", "A new dialog waits for a person: the visitor asked for a person")),
			until(`document.querySelectorAll('.inbox-list .inbox-item').length === 3`),
		)
	})
}
