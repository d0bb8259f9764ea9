package webtest

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// Sign-in of the tenant's operator: a user whose role answers handed-off
// dialogs and nothing more.
const (
	operatorEmail    = "ada@acme.test"
	operatorPassword = "operator password 42"
)

// TestHandoffToAPersonAndBack plays both sides at once: a visitor in the
// widget asks for a person, an operator signed in to the admin UI sees the
// dialog arrive in the inbox, takes it and replies, the visitor sees the
// reply without reloading, the operator hands the dialog back and the bot
// answers the visitor's next message.
func TestHandoffToAPersonAndBack(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, visitor context.Context) {
		op := platform.Operator()
		if _, err := w.svc.Users().Create(context.Background(), op, operatorEmail, operatorPassword); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Members().Add(context.Background(), op, "acme", operatorEmail, auth.RoleOperator); err != nil {
			t.Fatal(err)
		}
		operator := tab(t, visitor)
		site := w.site(t)
		key := w.widgetKey(t, site.URL)

		t.Run("the operator signs in and watches an empty inbox", func(t *testing.T) {
			run(t, operator, "sign in",
				chromedp.Navigate(w.api.URL+"/admin/"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), operatorEmail),
				chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), operatorPassword),
				chromedp.Click(chromedp.CSS(`form:has(input[name="email"]) button[type="submit"]`)),
				until(`document.querySelector('header.top nav') !== null`),
				do(`location.hash = '#/t/acme/inbox'`),
				until(contains("document", ".inbox-list", "Nobody is waiting")),
			)
		})

		t.Run("a visitor who asks for a person is told one is on the way", func(t *testing.T) {
			run(t, visitor, "ask for a person",
				chromedp.Navigate(site.URL+"/?key="+key),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
				send("I want to talk to a person"),
				until(contains(shadow, ".note", "Connecting you to a person")),
			)
		})

		t.Run("the dialog arrives in the operator's inbox without a reload, with a count", func(t *testing.T) {
			run(t, operator, "inbox",
				// "Nobody is waiting" says waiting too: the dialog's link is the arrival.
				until(`document.querySelector('.inbox-list a') !== null`),
				until(contains("document", ".inbox-list", "waiting")),
				until(`document.getElementById('inbox-count').textContent === '1' && !document.getElementById('inbox-count').hidden`),
			)
			screenshot(t, operator, "inbox-waiting")
		})

		t.Run("the operator takes the dialog and replies; the visitor sees it live", func(t *testing.T) {
			run(t, operator, "take and reply",
				click(`document.querySelector('.inbox-list a')`),
				until(contains("document", ".transcript", "I want to talk to a person")),
				until(contains("document", ".transcript", "handoff_to_human")),
				until(`Array.from(document.querySelectorAll('.inbox-detail button')).some(b => b.textContent === 'Take')`),
				click(`Array.from(document.querySelectorAll('.inbox-detail button')).find(b => b.textContent === 'Take')`),
				until(`document.querySelector('.reply-form textarea') !== null`),
				do(`document.querySelector('.reply-form textarea').focus()`),
				chromedp.KeyEvent("Hi, Ada here."),
			)
			// The visitor writes while the operator types: the dialog is
			// redrawn, and the half-written reply keeps its text and focus.
			run(t, visitor, "write meanwhile", send("Hello? Is anyone there?"))
			run(t, operator, "keep typing",
				until(contains("document", ".transcript", "Is anyone there?")),
				until(`document.activeElement === document.querySelector('.reply-form textarea')`),
				chromedp.KeyEvent(" I have refunded your order."),
				click(`document.querySelector('.reply-form button[type="submit"]')`),
				until(contains("document", ".transcript", "Ada here")),
			)
			run(t, visitor, "see the reply",
				until(contains(shadow, ".note", "ada joined the conversation")),
				until(contains(shadow, ".msg.operator", "Hi, Ada here. I have refunded your order.")),
			)
			screenshot(t, visitor, "widget-operator")
		})

		t.Run("after a reload the visitor still sees the operator and hears the next reply", func(t *testing.T) {
			run(t, visitor, "reload",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.operator", "Hi, Ada here. I have refunded your order.")),
			)
			run(t, operator, "second reply",
				until(`document.querySelector('.reply-form textarea') !== null`),
				do(`document.querySelector('.reply-form textarea').value = 'Anything else I can do?'`),
				click(`document.querySelector('.reply-form button[type="submit"]')`),
				until(contains("document", ".transcript", "Anything else I can do?")),
			)
			run(t, visitor, "see the second reply",
				until(contains(shadow, ".msg.operator", "Anything else I can do?")),
			)
			if n := eval[int](t, visitor, shadow+`.querySelectorAll('.msg.operator').length`); n != 2 {
				t.Fatalf("the visitor sees %d operator messages, want each of the 2 once", n)
			}
		})

		t.Run("the operator hands back and the bot answers the next message", func(t *testing.T) {
			run(t, operator, "hand back",
				click(`Array.from(document.querySelectorAll('.inbox-detail button')).find(b => b.textContent === 'Hand back to the bot')`),
				until(contains("document", ".inbox-list", "Nobody is waiting")),
			)
			run(t, visitor, "bot again",
				until(contains(shadow, ".note", "chatting with the assistant again")),
				send("Thanks! One more question"),
				until(contains(shadow, ".msg.bot", "Echo: Thanks! One more question")),
			)
		})
	})
}
