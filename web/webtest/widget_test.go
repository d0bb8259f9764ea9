package webtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestWidgetChatsFromAnAllowedSite embeds the widget on a page of another
// origin, with a pk_ key that allows that origin: the greeting shows, a
// message gets a streamed reply, and a reload continues the conversation.
func TestWidgetChatsFromAnAllowedSite(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		key := w.widgetKey(t, site.URL)

		t.Run("opening the widget greets the visitor", func(t *testing.T) {
			run(t, ctx, "open widget",
				chromedp.Navigate(site.URL+"/?key="+key),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			)
		})

		t.Run("a message gets a streamed reply", func(t *testing.T) {
			run(t, ctx, "send",
				send("Where is my order?"),
				until(contains(shadow, ".msg.bot", "Echo: Where is my order?")),
			)
			screenshot(t, ctx, "widget")
		})

		t.Run("the dialog carries the signed user's id and claims and the page's context", func(t *testing.T) {
			ds, _, err := w.rt.Dialogs().List(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{}, platform.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 || ds[0].UserID != "u-42" || ds[0].Context["customer_tier"] != "gold" || ds[0].Context["page_lang"] != "de" {
				t.Fatalf("dialogs %+v; want one of user u-42 with customer_tier=gold (the token) and page_lang=de (the page)", ds)
			}
		})

		t.Run("a reload continues the conversation", func(t *testing.T) {
			run(t, ctx, "reload",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.user", "Where is my order?")),
				until(contains(shadow, ".msg.bot", "Echo: Where is my order?")),
			)
		})

		t.Run("a client tool runs in the page through window.Parley.onClientTool", func(t *testing.T) {
			run(t, ctx, "client tool",
				send("where am I?"),
				until(contains(shadow, ".msg.bot", `Tool said: {"city":"Oslo","tool":"locate"}`)),
			)
		})

		t.Run("a tool that needs confirmation runs only once the visitor allows it", func(t *testing.T) {
			run(t, ctx, "ask",
				send("please cancel order A1"),
				until(contains(shadow, ".ask", "“cancel_order” (order: A1)?")),
			)
			if n := w.cancelled.Load(); n != 0 {
				t.Fatalf("the shop was called %d times before the visitor allowed it", n)
			}
			run(t, ctx, "allow",
				click(shadow+`.querySelector('.ask .btn:not(.ghost)')`),
				until(contains(shadow, ".msg.bot", `Tool said: {"cancelled":"/orders/A1/cancel"}`)),
			)
			if n := w.cancelled.Load(); n != 1 {
				t.Errorf("the shop was called %d times after one allowed call; want 1", n)
			}
		})

		t.Run("a network failure offers a retry that sends the message once", func(t *testing.T) {
			w.cut.Store(true)
			run(t, ctx, "send while cut off",
				send("Are you there?"),
				until(contains(shadow, ".msg.error", "Cannot reach the chat")),
			)
			w.cut.Store(false)
			run(t, ctx, "retry",
				click(shadow+`.querySelector('.msg.error .btn')`),
				until(contains(shadow, ".msg.bot", "Echo: Are you there?")),
			)
			ds, _, err := w.rt.Dialogs().List(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{}, platform.ListOptions{})
			if err != nil || len(ds) != 1 {
				t.Fatalf("dialogs %v, %v; want one", ds, err)
			}
			dd, err := w.rt.Dialogs().Get(context.Background(), platform.Operator(), "acme", ds[0].ID, "")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, m := range dd.Messages {
				if m.Role == "user" && m.Text == "Are you there?" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the dialog holds %d copies of the retried message; want 1", n)
			}
			screenshot(t, ctx, "widget-conversation")
		})

		t.Run("another user signed in through setUserToken gets their own dialog", func(t *testing.T) {
			run(t, ctx, "switch user",
				do(fmt.Sprintf(`window.Parley.setUserToken(%s), true`, js(userToken(t, "u-43", "platinum")))),
				send("Hello from u-43"),
				until(contains(shadow, ".msg.bot", "Echo: Hello from u-43")),
			)
			ds, _, err := w.rt.Dialogs().List(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{}, platform.ListOptions{})
			if err != nil || len(ds) != 2 {
				t.Fatalf("dialogs %+v, %v; want the first user's and a new one", ds, err)
			}
			if d := ds[1]; d.UserID != "u-43" || d.Context["customer_tier"] != "platinum" {
				t.Fatalf("the new dialog %+v; want user u-43 with customer_tier=platinum from the new token", d)
			}
		})

		t.Run("the stop button stops a streaming reply and the chat goes on", func(t *testing.T) {
			run(t, ctx, "stop",
				send("tell me a story"),
				until(shadow+`.querySelector('form .btn.ghost') && !`+shadow+`.querySelector('form .btn.ghost').hidden`),
				until(contains(shadow, ".msg.bot", "Once upon a time")),
				click(shadow+`.querySelector('form .btn.ghost')`),
				until(contains(shadow, ".note", "Stopped.")),
				until(shadow+`.querySelector('form .btn.ghost').hidden`),
			)
			if got := eval[string](t, ctx, textOf(shadow, ".msg.bot")); strings.Contains(got, "and arrived.") {
				t.Fatalf("the whole story arrived (%q); want it stopped midway", got)
			}
			run(t, ctx, "next message", send("still there?"), until(contains(shadow, ".msg.bot", "Echo: still there?")))
		})

		t.Run("a closed dialog says so and the next message starts a new one", func(t *testing.T) {
			ds, _, err := w.rt.Dialogs().List(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{}, platform.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds { // the widget's dialog among them
				if _, err := w.rt.Dialogs().Close(context.Background(), platform.Operator(), "acme", d.ID, "resolved by phone"); err != nil {
					t.Fatal(err)
				}
			}
			run(t, ctx, "send to the closed dialog",
				send("hello again"),
				until(contains(shadow, ".note", "This conversation has ended")),
				send("new question"),
				until(contains(shadow, ".msg.bot", "Echo: new question")),
			)
		})
	})
}

// send types text into the widget and submits it, once the widget takes
// a message: while a reply still streams (its text may already show) the
// send button is disabled and a submit is ignored, as for a visitor.
func send(text string) chromedp.Action[chromedp.Void] {
	return until(fmt.Sprintf(`(() => {
  const form = %s.querySelector('form');
  if (form.querySelector('.btn').disabled) return false;
  form.querySelector('textarea').value = %s;
  form.requestSubmit();
  return true;
})()`, shadow, js(text)))
}

// TestWidgetOnASiteTheKeyDoesNotAllowShowsAnError embeds the widget with a
// pk_ key bound to another origin: the server refuses it and the widget
// says so instead of failing silently.
func TestWidgetOnASiteTheKeyDoesNotAllowShowsAnError(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		key := w.widgetKey(t, "https://www.acme.example")
		run(t, ctx, "open widget",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.error", "not available on this site")),
		)
		t.Logf("widget shows: %s", eval[string](t, ctx, textOf(shadow, ".msg.error")))
		ds, _, err := w.rt.Dialogs().List(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{}, platform.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 0 {
			t.Errorf("%d dialogs were started from a refused origin; want none", len(ds))
		}
	})
}

// click clicks the element an expression finds, which CSS selectors
// cannot reach inside a shadow root.
func click(expr string) chromedp.Action[chromedp.Void] {
	return do(expr + `.click()`)
}

// TestWidgetDemoPageWorksUnderItsStrictCSP loads /widget-demo.html, which
// the server sends with default-src 'self': the widget's styles and its
// calls must still work there, as on any site with a strict policy.
func TestWidgetDemoPageWorksUnderItsStrictCSP(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		key := w.widgetKey(t, w.api.URL)
		run(t, ctx, "demo",
			chromedp.Navigate(w.api.URL+"/widget-demo.html?key="+key+"&tenant=acme&bot=support"),
			until(contains("document", "#snippet", `data-key="`+key+`"`)),
			until(`document.getElementById('parley-widget') !== null`),
			until(`getComputedStyle(`+shadow+`.querySelector('.root')).position === 'fixed'`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			send("Hello from the demo"),
			until(contains(shadow, ".msg.bot", "Echo: Hello from the demo")),
			// Thumbs come once the reply is stored: the reload below reads
			// it back (a reload mid-reply is TestAReloadMidReplyStillGetsTheReply).
			until(shadow+`.querySelector('.rate .thumb') !== null`),
		)
		// After a reload the widget reads its dialog back with a GET,
		// which Chromium sends without Origin on the page's own origin.
		run(t, ctx, "reload the demo and send again",
			chromedp.Reload(),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.user", "Hello from the demo")),
			until(contains(shadow, ".msg.bot", "Echo: Hello from the demo")),
			send("Still there after the reload?"),
			until(contains(shadow, ".msg.bot", "Echo: Still there after the reload?")),
		)
	})
}

// TestAReloadMidReplyStillGetsTheReply reloads the page while the bot is
// still answering (the model holds its answer): the widget shows the
// visitor's message and the dots, then the reply once it is stored,
// without another reload, and then holds no stream open. A reply that
// turns out to be a client tool's call is run by the reloaded page.
func TestAReloadMidReplyStillGetsTheReply(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		run(t, ctx, "open",
			chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
		)
		// reloadMidReply sends text, reloads once the model holds its
		// answer, and lets the answer go once the reloaded page shows the
		// message waiting for it.
		reloadMidReply := func(t *testing.T, text string) {
			run(t, ctx, "ask", send(text))
			select {
			case <-w.asked: // the message is stored and its reply under way
			case <-time.After(waitLimit):
				t.Fatal("the model was never asked")
			}
			run(t, ctx, "reload while the bot answers",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.user", text)),
				until(shadow+`.querySelector('.typing') !== null`),
			)
			w.answer()
		}
		// noStreams waits for the widget to close its live stream.
		noStreams := func(t *testing.T) {
			deadline := time.Now().Add(waitLimit)
			for w.following.Load() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d live streams still open after the reply came; want none for an idle visitor", w.following.Load())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}

		t.Run("the reply shows once stored", func(t *testing.T) {
			reloadMidReply(t, "take your time")
			run(t, ctx, "the reply comes",
				until(contains(shadow, ".msg.bot", "Echo: take your time")),
				until(shadow+`.querySelector('.rate .thumb') !== null`),
				until(shadow+`.querySelector('.typing') === null`),
				until(`!`+shadow+`.querySelector('form .btn').disabled`),
			)
			if n := eval[int](t, ctx, `Array.from(`+shadow+`.querySelectorAll('.msg.bot')).filter(e => e.textContent.includes('Echo: take your time')).length`); n != 1 {
				t.Errorf("the reply shows %d times; want once", n)
			}
			noStreams(t)
			run(t, ctx, "the chat goes on", send("still there?"), until(contains(shadow, ".msg.bot", "Echo: still there?")))
		})

		t.Run("a client tool the reply calls runs in the reloaded page", func(t *testing.T) {
			reloadMidReply(t, "take your time, where am I?")
			run(t, ctx, "the tool runs and the reply comes",
				until(contains(shadow, ".msg.bot", `Tool said: {"city":"Oslo","tool":"locate"}`)),
				until(`!`+shadow+`.querySelector('form .btn').disabled`),
			)
			noStreams(t)
		})
	})
}

// TestWidgetThemeAvatarLogoAndLanguage embeds the widget with theme
// attributes: valid ones show (German strings, dark theme, left side,
// https logo, same-origin avatar beside the bot's messages), and refused
// ones (a javascript: address, a colour that is not one) fall back.
func TestWidgetThemeAvatarLogoAndLanguage(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		t.Run("valid attributes theme the widget in German", func(t *testing.T) {
			site := w.siteWith(t, `data-locale="de-AT" data-theme="dark" data-position="left" data-color="#0a7d4f"
  data-logo="https://cdn.acme.example/logo.png" data-avatar="SITE/avatar.png"`)
			run(t, ctx, "open",
				chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			)
			for expr, want := range map[string]string{
				shadow + `.querySelector('textarea').placeholder`:                             "Nachricht eingeben…",
				shadow + `.querySelector('form .btn').textContent`:                            "Senden",
				shadow + `.querySelector('.launcher').getAttribute('aria-label')`:             "Chat schließen",
				shadow + `.querySelector('.head strong').textContent`:                         "Schreiben Sie uns",
				shadow + `.querySelector('.root').className`:                                  "root dark left",
				shadow + `.querySelector('.root').lang`:                                       "de",
				shadow + `.querySelector('.head img.logo').src`:                               "https://cdn.acme.example/logo.png",
				shadow + `.querySelector('.row img.avatar + .msg.bot').textContent`:           "Hi! I am the Acme assistant.",
				shadow + `.querySelector('.row img.avatar').getAttribute('src')`:              site.URL + "/avatar.png",
				`getComputedStyle(` + shadow + `.querySelector('.panel')).backgroundColor`:    "rgb(29, 34, 48)",
				`getComputedStyle(` + shadow + `.querySelector('.launcher')).backgroundColor`: "rgb(10, 125, 79)",
				`getComputedStyle(` + shadow + `.querySelector('.root')).left`:                "20px",
			} {
				if got := eval[string](t, ctx, expr); got != want {
					t.Errorf("%s = %q; want %q", expr, got, want)
				}
			}
			screenshot(t, ctx, "widget-dark-de")
		})

		t.Run("refused addresses and values fall back, and an unknown language is English", func(t *testing.T) {
			site := w.siteWith(t, `data-locale="xx" data-theme="neon" data-position="top" data-color="red; background: url(https://evil.example)"
  data-logo="javascript:alert(1)" data-avatar="http://tracker.example/a.png"`)
			run(t, ctx, "open",
				chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			)
			for expr, want := range map[string]string{
				shadow + `.querySelector('textarea').placeholder`:                             "Type a message…",
				shadow + `.querySelector('.root').className`:                                  "root light right",
				`String(` + shadow + `.querySelectorAll('img').length)`:                       "0",
				`getComputedStyle(` + shadow + `.querySelector('.launcher')).backgroundColor`: "rgb(53, 87, 224)",
			} {
				if got := eval[string](t, ctx, expr); got != want {
					t.Errorf("%s = %q; want %q", expr, got, want)
				}
			}
		})

		t.Run("without data-locale the browser's language is used", func(t *testing.T) {
			site := w.siteWith(t, "")
			ua := eval[string](t, ctx, `navigator.userAgent`)
			run(t, ctx, "load in Spanish",
				chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "es-MX"})
					return err
				}),
				chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
				until(shadow+`.querySelector('form .btn') !== null`),
			)
			if got := eval[string](t, ctx, shadow+`.querySelector('form .btn').textContent`); got != "Enviar" {
				t.Errorf("with navigator.language %q the send button reads %q; want Enviar", eval[string](t, ctx, `navigator.language`), got)
			}
		})

		for _, tc := range []struct{ locale, send string }{{"fr", "Envoyer"}, {"es", "Enviar"}, {"zh-CN", "发送"}, {"en-GB", "Send"}} {
			t.Run("data-locale "+tc.locale, func(t *testing.T) {
				site := w.siteWith(t, `data-locale="`+tc.locale+`"`)
				run(t, ctx, "load",
					chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
					until(shadow+`.querySelector('form .btn') !== null`),
				)
				if got := eval[string](t, ctx, shadow+`.querySelector('form .btn').textContent`); got != tc.send {
					t.Errorf("send button %q; want %q", got, tc.send)
				}
			})
		}
	})
}
