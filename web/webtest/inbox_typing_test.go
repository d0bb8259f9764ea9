package webtest

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestTypingAndReadMarksInHandoff plays both sides of a handoff at once
// and checks what each shows of the other besides messages: the visitor
// types and the inbox says so; the operator types and the widget names
// them; the operator's reply, shown in the widget, comes back to the
// inbox as "Seen"; the visitor's messages say "Read" once the operator has
// the dialog open; and both marks are still there after a reload.
func TestTypingAndReadMarksInHandoff(t *testing.T) {
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
		// typeInto types into a text box as a keystroke would: an input event.
		typeInto := func(root, css, text string) chromedp.Action[chromedp.Void] {
			return do(`(() => { const box = ` + root + `.querySelector(` + js(css) + `); box.value = ` + js(text) +
				`; box.dispatchEvent(new Event('input', { bubbles: true })); })()`)
		}

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
		run(t, visitor, "ask for a person",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			send("I want to talk to a person"),
			until(contains(shadow, ".note", "Connecting you to a person")),
		)
		run(t, operator, "open and take the dialog",
			until(`document.querySelector('.inbox-list a') !== null`),
			click(`document.querySelector('.inbox-list a')`),
			until(`Array.from(document.querySelectorAll('.inbox-detail button')).some(b => b.textContent === 'Take')`),
			click(`Array.from(document.querySelectorAll('.inbox-detail button')).find(b => b.textContent === 'Take')`),
			until(`document.querySelector('.reply-form textarea') !== null`),
		)

		t.Run("the visitor's messages read Read once the operator has the dialog open", func(t *testing.T) {
			run(t, visitor, "read mark",
				until(contains(shadow, ".note", "ada joined the conversation")),
				until(shadow+`.querySelector('.seen') !== null`),
				until(shadow+`.querySelector('.seen').previousElementSibling.textContent.includes('I want to talk to a person')`),
			)
		})

		t.Run("the visitor types and the inbox says so", func(t *testing.T) {
			if eval[bool](t, operator, `!document.querySelector('.visitor-typing').hidden`) {
				t.Fatal("the inbox says the visitor types before they do")
			}
			run(t, visitor, "type", typeInto(shadow, "form textarea", "Hel"))
			run(t, operator, "see it",
				until(`!document.querySelector('.visitor-typing').hidden`),
				until(contains("document", ".visitor-typing", "Visitor is typing…")),
			)
			screenshot(t, operator, "inbox-visitor-typing")
		})

		t.Run("the operator types and the widget names them", func(t *testing.T) {
			run(t, operator, "type", typeInto("document", ".reply-form textarea", "Hi, Ada"))
			run(t, visitor, "see it", until(contains(shadow, ".typing em", "ada is typing…")))
			screenshot(t, visitor, "widget-operator-typing")
		})

		t.Run("the operator's reply, shown in the widget, is Seen in the inbox", func(t *testing.T) {
			run(t, operator, "reply",
				typeInto("document", ".reply-form textarea", "Hi, Ada here. How can I help?"),
				click(`document.querySelector('.reply-form button[type="submit"]')`),
				until(contains("document", ".transcript", "How can I help?")),
			)
			run(t, visitor, "read the reply",
				until(contains(shadow, ".msg.operator", "Hi, Ada here. How can I help?")),
				until(shadow+`.querySelector('.typing') === null`),
			)
			run(t, operator, "see it seen",
				until(`document.querySelector('.transcript li.operator .seen-mark') !== null`),
				until(`document.querySelector('.seen-mark').closest('li').textContent.includes('How can I help?')`),
			)
			screenshot(t, operator, "inbox-seen")
		})

		t.Run("the visitor's next message is Read as the operator's open inbox shows it", func(t *testing.T) {
			run(t, visitor, "write", send("My order never arrived."))
			run(t, operator, "show it", until(contains("document", ".transcript", "My order never arrived.")))
			run(t, visitor, "see it read",
				until(shadow+`.querySelector('.seen').previousElementSibling.textContent.includes('My order never arrived.')`),
			)
			if n := eval[int](t, visitor, shadow+`.querySelectorAll('.seen').length`); n != 1 {
				t.Fatalf("the widget shows %d read marks, want one under the newest message read", n)
			}
			screenshot(t, visitor, "widget-read")
		})

		t.Run("after a reload both sides still show their read marks", func(t *testing.T) {
			run(t, operator, "reload the inbox",
				chromedp.Reload(),
				until(contains("document", ".transcript", "How can I help?")),
				until(`document.querySelector('.transcript li.operator .seen-mark') !== null`),
			)
			run(t, visitor, "reload the widget",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.operator", "How can I help?")),
				until(shadow+`.querySelector('.seen') !== null`),
				until(shadow+`.querySelector('.seen').previousElementSibling.textContent.includes('My order never arrived.')`),
			)
		})
	})
}
