package webtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// The defects of the console that people who do not write code found
// (issue 28): each test here failed before its fix.

// brokenConfig has a syntax error on line 3 (no comma after line 2), and
// text typed after the error that must not be lost.
const brokenConfig = "{\n  \"basic_settings\": {\"name\": \"Acme Support\", \"greeting\": \"Hi\"}\n  \"llm\": {\"model\": \"typed after the break\"}\n}"

// TestASyntaxErrorInTheJSONIsShownAndTheFormCannotOverwriteIt breaks the
// JSON as a person typing would: the status says where, the form says so
// and takes no edits, so what was typed since the JSON last parsed stays.
func TestASyntaxErrorInTheJSONIsShownAndTheFormCannotOverwriteIt(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		run(t, ctx, "open the bot", w.openBotPage()...)
		run(t, ctx, "break the JSON",
			until(contains("document", ".pill", "Valid")),
			setEditor(brokenConfig),
			until(contains("document", ".pill", "syntax error")),
		)
		t.Run("the status says the JSON does not parse, and where", func(t *testing.T) {
			status := eval[string](t, ctx, textOf("document", ".editor-status .pill"))
			if !strings.Contains(status, "line 3") || strings.Contains(status, "Valid") {
				t.Errorf("the status reads %q; want the syntax error's line 3", status)
			}
		})
		t.Run("the form says where the error is and takes no edits", func(t *testing.T) {
			run(t, ctx, "show the form",
				chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
				until(contains("document", ".config-form", "the JSON has a syntax error at line 3; fix it in the JSON tab")),
			)
			editable := eval[int](t, ctx, `Array.from(document.querySelectorAll('.config-form input, .config-form textarea, .config-form select, .config-form button'))
  .filter(e => !e.matches(':disabled') && !e.closest('[inert]')).length`)
			if editable != 0 {
				t.Errorf("%d controls of the form can still be edited", editable)
			}
			// A person clicks the name field and types anyway.
			run(t, ctx, "type into the form",
				do(`(() => { const el = document.querySelector('[data-pointer="/basic_settings/name"] input'); if (el) el.focus(); return true; })()`),
				chromedp.KeyEvent("Overwritten"),
			)
			if text := eval[string](t, ctx, editorText); text != brokenConfig {
				t.Errorf("after typing in the form the JSON reads %q; want what was typed, unchanged", text)
			}
			screenshot(t, ctx, "found-form-syntax-error")
		})
		t.Run("fixing the JSON brings the form back with what was typed", func(t *testing.T) {
			run(t, ctx, "fix it",
				setEditor(strings.Replace(brokenConfig, "}\n  \"llm\"", "},\n  \"llm\"", 1)),
				until(contains("document", ".pill", "Valid")),
				chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
				chromedp.WaitVisible(field("/basic_settings/name", "input")),
			)
			if n := eval[int](t, ctx, `document.querySelectorAll('.config-form :disabled, .config-form [inert]').length`); n != 0 {
				t.Errorf("%d parts of the form are still read-only", n)
			}
		})
	})
}

// TestLeavingABotPageWithUnsavedEditsAsksFirst edits a bot's config and
// leaves its page by the navigation, by the browser's back button and by
// closing the tab: each asks before the edit is lost.
func TestLeavingABotPageWithUnsavedEditsAsksFirst(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		// confirm answers what window.answer says and counts its questions.
		const stubConfirm = `window.asked = []; window.answer = false; window.confirm = (m) => { window.asked.push(m); return window.answer; }`
		const leaveTab = `(() => { const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); return e.defaultPrevented; })()`
		run(t, ctx, "open the bot", w.openBotPage()...)
		run(t, ctx, "wait for the editor", until(contains("document", ".pill", "Valid")), do(stubConfirm))

		t.Run("an unchanged page is left without a question", func(t *testing.T) {
			if eval[bool](t, ctx, leaveTab) {
				t.Error("closing the tab of an unchanged bot page asks")
			}
		})
		run(t, ctx, "edit", setEditor(w.draftConfig()), until(contains("document", ".pill", "Valid")))

		t.Run("closing the tab warns", func(t *testing.T) {
			if !eval[bool](t, ctx, leaveTab) {
				t.Error("closing the tab with unsaved edits does not warn")
			}
		})
		t.Run("another section of the navigation asks, and staying keeps the edit", func(t *testing.T) {
			run(t, ctx, "click API keys",
				click(`Array.from(document.querySelectorAll('header nav a')).find(a => a.textContent === 'API keys')`),
				until(`window.asked.length === 1`),
			)
			if !strings.Contains(eval[string](t, ctx, `window.asked[0]`), "unsaved") {
				t.Errorf("the question is %q", eval[string](t, ctx, `window.asked[0]`))
			}
			if h := eval[string](t, ctx, `location.hash`); h != "#/t/acme/bots/support" {
				t.Errorf("after staying the address is %q", h)
			}
			if text := eval[string](t, ctx, editorText); !strings.Contains(text, "Howdy from the draft!") {
				t.Error("after staying the edit is gone")
			}
		})
		t.Run("the back button asks too", func(t *testing.T) {
			run(t, ctx, "go back", do(`history.back()`), until(`window.asked.length === 2`))
			if text := eval[string](t, ctx, editorText); !strings.Contains(text, "Howdy from the draft!") {
				t.Error("after staying the edit is gone")
			}
		})
		t.Run("leaving when the person says so leaves", func(t *testing.T) {
			run(t, ctx, "leave",
				do(`window.answer = true`),
				click(`Array.from(document.querySelectorAll('header nav a')).find(a => a.textContent === 'API keys')`),
				until(contains("document", "main h1", "API keys")),
			)
			if eval[bool](t, ctx, leaveTab) {
				t.Error("the keys page still warns on closing the tab")
			}
		})
	})
}

// TestSkipLinkPatternsAndWidthsOfTheAdminPages checks the frame on every
// page: "Skip to content" moves focus to the page's own main content, no
// input's pattern is an invalid regular expression (Chromium compiles
// them with the v flag and drops the bad ones with a console error), and
// no page scrolls sideways at 1,280 or 400 pixels.
func TestSkipLinkPatternsAndWidthsOfTheAdminPages(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		for _, u := range []string{"https://crm.example.com/hooks/parley/with/a/rather/long/path/that/goes/on?and=a&query=string", "https://example.org/h"} {
			if _, err := w.svc.Webhooks().Create(bg, op, "acme", platform.WebhookInput{URL: u, Events: []string{"dialog.created", "message.created", "dialog.handoff_requested", "dialog.handoff_taken", "dialog.closed", "tool.failed"}, Description: "Leads for the sales team from every new dialog"}); err != nil {
				t.Fatal(err)
			}
		}
		w.widgetKey(t, "https://www.acme.example", "https://shop.acme.example")
		handedOff := w.talk(t, "a-customer-with-a-rather-long-user-id@mail.acme.example", "a packing list please", "I want to talk to a person")
		if _, err := w.svc.Knowledge().CreateBase(bg, op, "acme", platform.KnowledgeBaseInput{Name: "Help Center for the outdoor shop and its many customers"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.svc.Knowledge().AddSource(bg, op, "acme", "help-center-for-the-outdoor-shop-and-its-many-customers", platform.SourceInput{Kind: "url",
			URL: "https://help.acme.example/a/rather/long/path/to/the/returns-and-refunds-policy-page", Tags: []string{"returns", "refunds", "policy"}, Refresh: "24h"}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "sign in", w.signInWithKey()...)

		t.Run("skip to content focuses the current page's main content", func(t *testing.T) {
			run(t, ctx, "skip on the webhooks page",
				do(`location.hash = '#/t/acme/webhooks'`),
				until(contains("document", "main h1", "Webhooks")),
				do(`document.querySelector('a.skip').focus()`),
				chromedp.KeyEvent(kb.Enter),
			)
			if h := eval[string](t, ctx, `location.hash`); h != "#/t/acme/webhooks" {
				t.Errorf("after skipping the address is %q", h)
			}
			run(t, ctx, "the webhooks page stays", until(contains("document", "main h1", "Webhooks")))
			if id := eval[string](t, ctx, `document.activeElement.id`); id != "main" {
				t.Errorf("after skipping the focus is on #%q; want #main", id)
			}
		})

		pages := []string{"", "/bots/support", "/inbox", "/inbox/" + handedOff, "/dialogs", "/dialogs/" + handedOff, "/keys", "/secrets",
			"/providers", "/webhooks", "/channels", "/members", "/audit", "/usage",
			"/knowledge", "/knowledge/help-center-for-the-outdoor-shop-and-its-many-customers"}
		for _, width := range []int64{1280, 400} {
			t.Run(fmt.Sprintf("no page is wider than a %d px window and every pattern compiles", width), func(t *testing.T) {
				run(t, ctx, "resize", chromedp.EmulateViewport(width, 900))
				for _, p := range pages {
					run(t, ctx, "open "+p,
						do(fmt.Sprintf(`location.hash = %s`, js("#/t/acme"+p))),
						until(`document.querySelector('main h1') !== null && !document.querySelector('main .loading') && (!location.hash.includes('/inbox/') || document.querySelector('.inbox-detail .transcript') !== null)`),
					)
					if wide := eval[int](t, ctx, `document.documentElement.scrollWidth`); wide > int(width) {
						over := eval[string](t, ctx, fmt.Sprintf(`Array.from(document.querySelectorAll('main *')).filter(e => e.getBoundingClientRect().right > %d && !e.closest('.table-wrap, pre')).slice(0, 3).map(e => e.tagName + '.' + e.className).join(', ')`, width))
						t.Errorf("page %q is %d px wide in a %d px window (%s)", p, wide, width, over)
						screenshot(t, ctx, fmt.Sprintf("found-too-wide-%d%s", width, strings.ReplaceAll(p, "/", "-")))
					} else if *screenshots != "" {
						screenshot(t, ctx, fmt.Sprintf("found-page-%d%s", width, strings.ReplaceAll(p, "/", "-")))
					}
					bad := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('[pattern]')).map(e => e.getAttribute('pattern')).filter(p => { try { new RegExp('^(?:' + p + ')$', 'v'); return false; } catch { return true; } })`)
					if len(bad) > 0 {
						t.Errorf("page %q has patterns that are not valid regular expressions in v mode: %q", p, bad)
					}
				}
				run(t, ctx, "reset", chromedp.EmulateReset())
			})
		}
	})
}

// talk opens a dialog of user with the support bot and sends it texts,
// each answered by the fake model; it returns the dialog's id.
func (w *world) talk(t *testing.T, user string, texts ...string) string {
	t.Helper()
	op, bg := platform.Operator(), context.Background()
	d, err := w.rt.Dialogs().Create(bg, op, "acme", "support", dialog.CreateDialogInput{UserID: user})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		if _, err := w.rt.SendMessage(bg, op, "acme", d.ID, dialog.SendInput{Text: text}, agent.SinkFunc(func(agent.Event) {})); err != nil {
			t.Fatal(err)
		}
	}
	return d.ID
}

// TestTheDialogLogShowsEventsAsEventsRendersRepliesAndListsNewestFirst
// reads dialogs in the console: a reply drawn from its Markdown, the
// loop's system events as event lines (not the customer's words) in the
// dialog view and the inbox, the newest dialog on top and every listed id
// told apart from the others.
func TestTheDialogLogShowsEventsAsEventsRendersRepliesAndListsNewestFirst(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		older := w.talk(t, "u-old", "hello")
		newer := w.talk(t, "u-new", "a packing list please", "I want to talk to a person")
		run(t, ctx, "sign in", w.signInWithKey()...)

		t.Run("the list shows the newest dialog first, each id told apart", func(t *testing.T) {
			run(t, ctx, "open the dialogs",
				do(`location.hash = '#/t/acme/dialogs'`),
				until(`document.querySelectorAll('tr[data-dialog]').length === 2`),
			)
			order := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('tr[data-dialog]')).map(r => r.dataset.dialog)`)
			if order[0] != newer || order[1] != older {
				t.Errorf("the list is %q; want the newer dialog %s first", order, newer)
			}
			shown := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('tr[data-dialog] td:first-child a')).map(a => a.innerText)`)
			if shown[0] == shown[1] {
				t.Errorf("both dialogs show the id %q", shown[0])
			}
			for i, id := range order {
				if title := eval[string](t, ctx, fmt.Sprintf(`document.querySelectorAll('tr[data-dialog] td:first-child a')[%d].title`, i)); title != id {
					t.Errorf("the link of %s has the title %q", id, title)
				}
			}
		})

		t.Run("the dialog view draws the reply's Markdown and the stop as an event line", func(t *testing.T) {
			run(t, ctx, "open the newer dialog",
				do(fmt.Sprintf(`location.hash = '#/t/acme/dialogs/' + %s`, js(newer))),
				until(contains("document", ".transcript", "Tent")),
			)
			if n := eval[int](t, ctx, `document.querySelectorAll('.transcript .turn.assistant .turn-text li').length`); n != 3 {
				t.Errorf("the Markdown reply has %d list items; want 3", n)
			}
			if bold := eval[string](t, ctx, textOf("document", ".transcript .turn.assistant .turn-text strong")); bold != "Packing list" {
				t.Errorf("the reply's bold text is %q", bold)
			}
			if raw := eval[string](t, ctx, textOf("document", ".transcript .turn.assistant")); strings.Contains(raw, "**Packing list**") {
				t.Errorf("the reply shows raw Markdown: %q", raw)
			}
			checkEventLines(t, ctx)
			screenshot(t, ctx, "found-dialog-view")
		})

		t.Run("a turn the model failed shows as an error line with its reason", func(t *testing.T) {
			failed := w.talk(t, "u-fail", "make the model fail")
			run(t, ctx, "open the failed dialog",
				do(fmt.Sprintf(`location.hash = '#/t/acme/dialogs/' + %s`, js(failed))),
				until(`!!document.querySelector('.transcript .event.failed')`),
			)
			if line := eval[string](t, ctx, textOf("document", ".transcript .event.failed")); !strings.Contains(line, "run failed: the language model rejected the request") {
				t.Errorf("the error line reads %q", line)
			}
		})

		t.Run("the inbox shows the stop as an event line too", func(t *testing.T) {
			run(t, ctx, "open it in the inbox",
				do(fmt.Sprintf(`location.hash = '#/t/acme/inbox/' + %s`, js(newer))),
				until(contains("document", ".inbox-detail .transcript", "Tent")),
			)
			checkEventLines(t, ctx)
		})
	})
}

// checkEventLines checks that the transcript on screen shows the loop's
// "run stopped" note as a centered event line and no user turn says it.
func checkEventLines(t *testing.T, ctx context.Context) {
	t.Helper()
	if users := eval[string](t, ctx, textOf("document", ".transcript .turn.user")); strings.Contains(users, "run stopped") {
		t.Errorf("a system event shows as the customer's message: %q", users)
	}
	event := eval[string](t, ctx, textOf("document", ".transcript .event"))
	if !strings.Contains(event, "run stopped: handoff") {
		t.Errorf("the event lines read %q; want the stop", event)
	}
	if align := eval[string](t, ctx, `getComputedStyle(document.querySelector('.transcript .event')).textAlign`); align != "center" {
		t.Errorf("an event line is aligned %q", align)
	}
}

// widgetDialog is the id of the one dialog the widget opened.
func (w *world) widgetDialog(t *testing.T) string {
	t.Helper()
	ds, _, err := w.rt.Dialogs().List(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{}, platform.ListOptions{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("the widget's dialogs: %d, %v", len(ds), err)
	}
	return ds[0].ID
}

// TestTheWidgetScrollsToAnOperatorsWholeReply hands a visitor's dialog to
// a person whose reply is long: the log ends at its last line, and once
// the visitor scrolls up to read, the next reply leaves them there.
func TestTheWidgetScrollsToAnOperatorsWholeReply(t *testing.T) {
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		run(t, ctx, "ask for a person",
			chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			send("I want to talk to a person"),
			until(contains(shadow, ".note", "Connecting you to a person")),
		)
		op, bg, id := platform.Operator(), context.Background(), w.widgetDialog(t)
		if _, err := w.rt.Handoffs().Assign(bg, op, "acme", id, "Ada"); err != nil {
			t.Fatal(err)
		}
		long := "Thanks for waiting. " + strings.Repeat("Here is one more line of what I found about your order. ", 14) + "The end of my reply."
		const log = shadow + `.querySelector('.log')`

		t.Run("a long reply is in view to its last line", func(t *testing.T) {
			if _, err := w.rt.Handoffs().Post(bg, op, "acme", id, long); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "read it", until(contains(shadow, ".msg.operator", "The end of my reply.")))
			if below := eval[int](t, ctx, fmt.Sprintf(`(l => l.scrollHeight - l.scrollTop - l.clientHeight)(%s)`, log)); below > 1 {
				t.Errorf("%d px of the log are below its fold after the reply", below)
			}
			screenshot(t, ctx, "found-widget-operator-reply")
		})
		t.Run("a visitor who scrolled up stays where they are", func(t *testing.T) {
			run(t, ctx, "scroll up", do(log+`.scrollTop = 0`))
			if _, err := w.rt.Handoffs().Post(bg, op, "acme", id, "One more thing."); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "wait for it", until(contains(shadow, ".msg.operator", "One more thing.")))
			if top := eval[int](t, ctx, log+`.scrollTop`); top != 0 {
				t.Errorf("the log scrolled to %d px under the visitor who was reading its top", top)
			}
		})
	})
}

// TestTheWidgetSaysTheMessageLimitAndKeepsTheText types messages around
// the server's limit (dialog.MaxMessageChars): the widget counts near it,
// will not send past it, and a message the server refuses comes back to
// the box instead of vanishing.
func TestTheWidgetSaysTheMessageLimitAndKeepsTheText(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		typed := func(n int) chromedp.Action[chromedp.Void] {
			return do(fmt.Sprintf(`(() => { const i = %s.querySelector('form textarea'); i.value = 'x'.repeat(%d); i.dispatchEvent(new Event('input')); return true; })()`, shadow, n))
		}
		const count, sendDisabled = shadow + `.querySelector('.count')`, shadow + `.querySelector('form .btn').disabled`
		limit := fmt.Sprintf("%d,%03d", dialog.MaxMessageChars/1000, dialog.MaxMessageChars%1000)
		run(t, ctx, "open the widget",
			chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
		)
		t.Run("a message past the limit says so and cannot be sent", func(t *testing.T) {
			run(t, ctx, "type 40,000 characters", typed(40000), do(shadow+`.querySelector('form').requestSubmit()`))
			if text := eval[string](t, ctx, count+`.hidden ? '' : `+count+`.textContent`); !strings.Contains(text, "Too long") || !strings.Contains(text, limit) {
				t.Errorf("the counter reads %q; want too long, with the limit %s", text, limit)
			}
			if !eval[bool](t, ctx, sendDisabled) {
				t.Error("Send is enabled for a message past the limit")
			}
			if n := eval[int](t, ctx, shadow+`.querySelector('form textarea').value.length`); n != 40000 {
				t.Errorf("the box holds %d characters after a refused send; want all 40000", n)
			}
			if n := eval[int](t, ctx, shadow+`.querySelectorAll('.msg.user').length`); n != 0 {
				t.Errorf("%d messages were sent", n)
			}
			screenshot(t, ctx, "found-widget-too-long")
		})
		t.Run("near the limit a counter shows, and Send works", func(t *testing.T) {
			run(t, ctx, "type 30,000", typed(30000))
			if text := eval[string](t, ctx, count+`.hidden ? '' : `+count+`.textContent`); !strings.Contains(text, "30,000 / "+limit) {
				t.Errorf("the counter reads %q", text)
			}
			if eval[bool](t, ctx, sendDisabled) {
				t.Error("Send is disabled under the limit")
			}
			run(t, ctx, "type a little", typed(10))
			if !eval[bool](t, ctx, count+`.hidden`) {
				t.Error("the counter shows for a short message")
			}
		})
		t.Run("a message the server refuses goes back to the box", func(t *testing.T) {
			run(t, ctx, "say hello", send("hello"), until(contains(shadow, ".msg.bot", "Echo: hello")))
			if _, err := w.rt.Dialogs().Close(context.Background(), platform.Operator(), "acme", w.widgetDialog(t), "resolved by phone"); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "write to the closed dialog", send("are you still there?"), until(contains(shadow, ".note", "ended")))
			if text := eval[string](t, ctx, shadow+`.querySelector('form textarea').value`); text != "are you still there?" {
				t.Errorf("after the refusal the box holds %q", text)
			}
		})
	})
}

// TestAPublishableKeyIsShownAgainAndItsOriginsEdited opens the Keys page
// with a widget key made earlier: its whole value and snippet show
// whenever asked (it is public), a server key offers no such thing and
// is stored as its hash alone, and the widget key's origins are edited
// in place, with a bad origin refused at its pointer.
func TestAPublishableKeyIsShownAgainAndItsOriginsEdited(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		pk := w.widgetKey(t, "https://www.acme.example")
		row := `Array.from(document.querySelectorAll('main tr')).find(r => r.textContent.includes('pk_'))`
		run(t, ctx, "open the keys", append(w.signInWithKey(),
			do(`location.hash = '#/t/acme/keys'`),
			until(contains("document", "main table", "widget")))...)

		t.Run("the widget key shows its whole value and snippet, a server key does not", func(t *testing.T) {
			run(t, ctx, "show it",
				click(row+`.querySelector('button')`),
				until(contains("document", ".widget-key", pk)),
			)
			if snippet := eval[string](t, ctx, textOf("document", ".widget-key pre")); !strings.Contains(snippet, `data-key="`+pk+`"`) {
				t.Errorf("the snippet is %q", snippet)
			}
			if n := eval[int](t, ctx, `Array.from(document.querySelectorAll('main tr')).filter(r => r.textContent.includes('sk_') && Array.from(r.querySelectorAll('button')).some(b => b.textContent === 'Show key')).length`); n != 0 {
				t.Errorf("%d server keys offer to show themselves", n)
			}
			keys, _, err := w.svc.APIKeys().List(context.Background(), platform.Operator(), "acme", platform.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rows, _, err := w.st.Tenant(keys[0].TenantID).Keys().List(context.Background(), store.Page{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range rows {
				if k.Kind == "sk" && k.Publishable != "" {
					t.Errorf("server key %s is stored with its value", k.ID)
				}
			}
		})

		t.Run("a bad origin is refused at its pointer, and good ones are saved", func(t *testing.T) {
			edit := func(origins string) chromedp.Action[chromedp.Void] {
				// The form stays open after a refusal; else it opens.
				return steps(
					do(fmt.Sprintf(`(b => b && b.click())(Array.from(%s.querySelectorAll('td.origins button')).find(b => b.textContent === 'Edit origins'))`, row)),
					until(row+`.querySelector('input[name="origins"]') !== null && !`+row+`.querySelector('form button[type="submit"]').disabled`),
					do(fmt.Sprintf(`%s.querySelector('input[name="origins"]').value = %s`, row, js(origins))),
					click(row+`.querySelector('form button[type="submit"]')`),
				)
			}
			run(t, ctx, "a path is no origin",
				edit("https://www.acme.example, https://new.acme.example/shop"),
				until(contains("document", "main .alert.error", "/origins/1")),
			)
			run(t, ctx, "two origins",
				edit("https://www.acme.example https://new.acme.example"),
				until(contains("document", "main .alert.ok", "origins")),
				until(contains("document", "main td.origins", "https://new.acme.example")),
			)
			keys, _, err := w.svc.APIKeys().List(context.Background(), platform.Operator(), "acme", platform.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if k.Kind == "pk" && strings.Join(k.Origins, " ") != "https://www.acme.example https://new.acme.example" {
					t.Errorf("the key's origins are %q", k.Origins)
				}
			}
			screenshot(t, ctx, "found-keys")
		})
	})
}
