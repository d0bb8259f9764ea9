package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// field is the CSS selector of the form control for a JSON pointer.
func field(pointer, control string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-pointer=%s] %s`, js(pointer), control))
}

// typeIn sets a form control's value as typing would (an input event), so
// a field that already holds text can be replaced.
func typeIn(pointer, control, value string) chromedp.Action[chromedp.Void] {
	return do(fmt.Sprintf(`(() => {
  const el = document.querySelector('[data-pointer=' + %s + '] %s');
  el.value = %s;
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
})()`, js(js(pointer)), control, js(value)))
}

// openSection opens one of the form's sections.
func openSection(id string) chromedp.Action[chromedp.Void] {
	return do(fmt.Sprintf(`document.querySelector('details.form-section[data-section=%s]').open = true`, js(id)))
}

// TestABotBuiltWithTheFormAloneAnswersInTheWidgetAndItsDialogIsFound is
// the whole walk for someone who does not write JSON. From a
// tenant with no bots, build a bot with the form alone (basic settings,
// an action book, an HTTP tool with a secret header, tried against the
// shop server with the request tester, a native tool, a context
// variable, the model and a limit), read a problem at its field, see the
// JSON view follow the form and the form follow the JSON, save, preview
// the draft calling the tool, and publish it. Then make a widget key in
// the console and paste its snippet into a site, where a visitor gets a
// failed tool call and a Markdown reply, rates the reply down with a
// comment and sees the rating after a reload. Back in the console, the
// dialog is found by a word of the reply, with its rating and failed
// call, and the usage page charts the day and the hour.
func TestABotBuiltWithTheFormAloneAnswersInTheWidgetAndItsDialogIsFound(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		_, created, err := w.svc.Tenants().Create(bg, op, platform.CreateTenantInput{Slug: "trail", Name: "Trail Co"})
		if err != nil {
			t.Fatal(err)
		}
		const shopToken = "trail-shop-token-0042"
		if _, err := w.svc.Secrets().Put(bg, op, "trail", "shop_token", shopToken); err != nil {
			t.Fatal(err)
		}

		t.Run("an empty tenant creates its first bot and gets the form", func(t *testing.T) {
			run(t, ctx, "sign in and create",
				w.signInAs(created.Key, "trail"),
				until(contains("document", "main .empty", "No bots yet")),
				chromedp.SendKeys(chromedp.CSS(`input[name="slug"]`), "helper"),
				chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "Trail Helper"),
				chromedp.Click(chromedp.Search(`//button[text()="Create bot"]`)),
				until(contains("document", "h1", "Trail Helper")),
				chromedp.WaitVisible(field("/basic_settings/name", "input")),
				until(contains("document", ".pill", "Valid")),
			)
			if got := eval[string](t, ctx, `document.querySelector('[data-pointer="/basic_settings/name"] input').value`); got != "Trail Helper" {
				t.Errorf("the form shows the name %q", got)
			}
			screenshot(t, ctx, "admin-form-editor-new-bot")
		})

		t.Run("basic settings and an action book are filled in the form", func(t *testing.T) {
			run(t, ctx, "basics",
				typeIn("/basic_settings/greeting", "input", "Welcome to the trail shop!"),
				chromedp.SendKeys(field("/basic_settings/description", "textarea"), "Helps hikers with their orders"),
			)
			run(t, ctx, "action book",
				openSection("action_books"),
				chromedp.Click(chromedp.Search(`//button[text()="+ Add an action book"]`)),
				chromedp.WaitVisible(field("/action_books/0/condition", "textarea")),
			)
			run(t, ctx, "action book 2",
				chromedp.SendKeys(field("/action_books/0/condition", "textarea"), "When a hiker asks about an order"),
				chromedp.SendKeys(field("/action_books/0/action", "textarea"), "Look it up with order_status"),
			)
		})

		t.Run("an HTTP tool is built with its argument, URL and secret header", func(t *testing.T) {
			runEach(t, ctx, "tool",
				openSection("tools"),
				chromedp.Click(chromedp.Search(`//button[text()="+ Add an HTTP tool"]`)),
				chromedp.WaitVisible(field("/tools/0/name", "input")),
				chromedp.SendKeys(field("/tools/0/name", "input"), "order_status"),
				chromedp.SendKeys(field("/tools/0/description", "textarea"), "Where an order is"),
				chromedp.Click(chromedp.CSS(`[data-pointer="/tools/0/parameters"] button.add-arg`)),
				chromedp.SendKeys(chromedp.CSS(`[data-pointer="/tools/0/parameters"] tbody tr input[aria-label="Argument name"]`), "order"),
				chromedp.SendKeys(chromedp.CSS(`[data-pointer="/tools/0/parameters"] tbody tr input[aria-label="Argument description"]`), "Order number"),
				chromedp.Click(chromedp.CSS(`[data-pointer="/tools/0/parameters"] tbody tr input[aria-label="Required"]`)),
				chromedp.SendKeys(field("/tools/0/endpoint/url", "input"), w.shopURL+"/orders/<order>"),
				chromedp.Click(chromedp.CSS(`[data-pointer="/tools/0/endpoint/headers"] button`)),
				chromedp.SendKeys(chromedp.CSS(`[data-pointer="/tools/0/endpoint/headers"] .pair input[aria-label$="name"]`), "Authorization"),
				chromedp.SendKeys(chromedp.CSS(`[data-pointer="/tools/0/endpoint/headers"] .pair input[aria-label$="value"]`), "Bearer {{secrets.shop_token}}"),
				until(contains("document", ".pill", "Valid · 1 tool")),
			)
		})

		t.Run("the request tester sends the call to the shop and shows it with the secret redacted", func(t *testing.T) {
			before := w.cancelled.Load()
			run(t, ctx, "try",
				chromedp.Click(chromedp.CSS(`[data-pointer="/tools/0"] details.tester summary`)),
				until(`document.querySelector('[data-pointer="/tools/0"] details.tester textarea').value.includes('"order": "example"')`),
				typeInTester(`{"order": "A7"}`),
				chromedp.Click(chromedp.Search(`//button[text()="Send test request"]`)),
				until(contains("document", ".trial pre.request", "GET "+w.shopURL+"/orders/A7")),
				until(contains("document", ".trial pre.response", "HTTP 200")),
				until(contains("document", ".trial pre.response", `{"cancelled": "/orders/A7"}`)),
				until(contains("document", ".trial pre.result", `{"cancelled":"/orders/A7"}`)),
			)
			req := eval[string](t, ctx, textOf("document", ".trial pre.request"))
			if !strings.Contains(req, "Authorization: Bearer [redacted]") || strings.Contains(eval[string](t, ctx, `document.body.innerText`), shopToken) {
				t.Errorf("the tester shows the request as %q; want the header with the secret redacted", req)
			}
			if w.cancelled.Load() != before+1 {
				t.Errorf("the shop got %d calls; want the tester's one", w.cancelled.Load()-before)
			}
			screenshot(t, ctx, "admin-form-editor-tester")
		})

		t.Run("a native tool, a context variable, the model and a limit are set", func(t *testing.T) {
			run(t, ctx, "rest",
				openSection("native_tools"),
				chromedp.Click(chromedp.CSS(`input[name="native:current_time"]`)),
				openSection("context_variables"),
				chromedp.Click(chromedp.Search(`//button[text()="+ Add a context variable"]`)),
				chromedp.WaitVisible(field("/context_variables/0/name", "input")),
				chromedp.SendKeys(field("/context_variables/0/name", "input"), "customer_tier"),
				openSection("model"),
				typeIn("/llm/model", "input", "gpt-4o-mini"),
				typeIn("/runtime/max_turns", "input", "500"),
			)
		})

		t.Run("a problem points at its form field and its JSON line", func(t *testing.T) {
			run(t, ctx, "problem",
				until(contains("document", "#config-problems li", "/runtime/max_turns")),
				until(contains("document", `[data-pointer="/runtime/max_turns"].invalid small.field-problem`, "")),
				chromedp.Click(chromedp.CSS(`#config-problems li button.pointer`)),
				until(`document.activeElement === document.querySelector('[data-pointer="/runtime/max_turns"] input')`),
			)
			line := eval[int](t, ctx, `Number(document.querySelector('#config-problems li button:not(.pointer)').textContent.replace('line ', ''))`)
			run(t, ctx, "line",
				chromedp.Click(chromedp.CSS(`#config-problems li button:not(.pointer)`)),
				jsonViewShown,
			)
			selected := eval[string](t, ctx, editorSelection)
			if !strings.Contains(selected, `"max_turns": 500`) {
				t.Errorf("line %d selected %q; want the max_turns line", line, selected)
			}
			screenshot(t, ctx, "admin-form-editor-problem")
		})

		t.Run("the JSON view follows the form and the form follows the JSON", func(t *testing.T) {
			text := eval[string](t, ctx, editorText)
			var config map[string]any
			if err := json.Unmarshal([]byte(text), &config); err != nil {
				t.Fatalf("the JSON view holds no JSON: %v\n%s", err, text)
			}
			for _, want := range []string{`"order_status"`, `"Bearer {{secrets.shop_token}}"`, `"required": [`, `"current_time"`, `"customer_tier"`, `"Welcome to the trail shop!"`} {
				if !strings.Contains(text, want) {
					t.Errorf("the JSON view lacks %s:\n%s", want, text)
				}
			}
			run(t, ctx, "edit JSON",
				setEditor(strings.Replace(text, `"max_turns": 500`, `"max_turns": 5`, 1)),
				until(contains("document", ".pill", "Valid · 2 tools")),
				chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
				chromedp.WaitVisible(field("/runtime/max_turns", "input")),
			)
			if got := eval[string](t, ctx, `document.querySelector('[data-pointer="/runtime/max_turns"] input').value`); got != "5" {
				t.Errorf("after the JSON edit the form shows max_turns %q; want 5", got)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll('.config-form .invalid').length`); n != 0 {
				t.Errorf("%d fields are still marked invalid", n)
			}
		})

		t.Run("the saved draft previews, calling the HTTP tool", func(t *testing.T) {
			run(t, ctx, "save and preview",
				chromedp.Click(chromedp.Search(`//button[text()="Save as new version"]`)),
				until(contains("document", ".alert.ok", "Saved as version 2")),
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "what is the status of order A7?"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				until(contains("document", ".chat-log .msg.bot", "Welcome to the trail shop!")),
				until(contains("document", ".chat-log details.tool.ok summary", "order_status")),
				until(contains("document", ".chat-log .msg.bot", `Tool said: {"cancelled":"/orders/A7"}`)),
			)
		})

		t.Run("publishing makes the form-built version live", func(t *testing.T) {
			run(t, ctx, "publish",
				chromedp.Click(chromedp.Search(`//tr[th[starts-with(normalize-space(.), "v2")]]//button[text()="Publish"]`)),
				until(contains("document", ".title-row .badge", "live: v2")),
			)
			bot, err := w.svc.Bots().Get(bg, op, "trail", "helper")
			if err != nil {
				t.Fatal(err)
			}
			v, err := w.svc.Versions().Get(bg, op, "trail", "helper", bot.PublishedVersion)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Tools []struct {
					Name       string
					Parameters struct{ Required []string }
					Endpoint   struct {
						URL     string
						Headers map[string]string
					}
				}
				NativeTools []string `json:"native_tools"`
				Runtime     struct {
					MaxTurns int `json:"max_turns"`
				}
			}
			if err := json.Unmarshal([]byte(v.Config), &got); err != nil {
				t.Fatal(err)
			}
			if bot.PublishedVersion != 2 || len(got.Tools) != 1 || got.Tools[0].Name != "order_status" ||
				got.Tools[0].Endpoint.Headers["Authorization"] != "Bearer {{secrets.shop_token}}" ||
				len(got.Tools[0].Parameters.Required) != 1 || len(got.NativeTools) != 1 || got.Runtime.MaxTurns != 5 {
				t.Errorf("published v%d with config %s", bot.PublishedVersion, v.Config)
			}
		})

		var snippet atomic.Pointer[string]
		site := pastedSite(t, &snippet)
		t.Run("a widget key made in the console gives the snippet a site pastes", func(t *testing.T) {
			run(t, ctx, "key",
				chromedp.Navigate(w.api.URL+"/admin/#/t/trail/keys"),
				chromedp.WaitVisible(chromedp.CSS(`select[name="kind"]`)),
				chromedp.SendKeys(chromedp.CSS(`form input[name="name"]`), "trail site"),
				do(`(() => { const s = document.querySelector('select[name=kind]'); s.value = 'pk'; s.dispatchEvent(new Event('change')); })()`),
				chromedp.WaitVisible(chromedp.CSS(`input[name="origins"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="origins"]`), site.URL),
				chromedp.Click(chromedp.Search(`//button[text()="Create key"]`)),
				until(`document.querySelector('.alert.once pre') !== null`),
			)
			s := eval[string](t, ctx, `document.querySelector('.alert.once pre').textContent`)
			if !strings.Contains(s, `data-key="pk_`) || !strings.Contains(s, `data-bot="helper"`) {
				t.Fatalf("the console's snippet is %s", s)
			}
			snippet.Store(&s)
		})

		reply := `Array.from(` + shadow + `.querySelectorAll('.rate[data-message]')).at(-1)`
		t.Run("a visitor gets a failed tool call and a Markdown reply, and rates it down with a comment", func(t *testing.T) {
			before := w.cancelled.Load()
			run(t, ctx, "chat",
				chromedp.Navigate(site.URL),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.bot", "Welcome to the trail shop!")),
				send("what is the status of order Z9?"),
				until(contains(shadow, ".msg.bot", "Tool said:")),
				send("a packing list please"),
				until(contains(shadow, ".msg.bot li", "Headlamp")),
				until(shadow+`.querySelectorAll('.rate[data-message]').length === 2`),
			)
			if w.cancelled.Load() != before+1 {
				t.Errorf("the shop got %d calls from the widget's dialog; want order_status's one", w.cancelled.Load()-before)
			}
			last := `Array.from(` + shadow + `.querySelectorAll('.msg.bot')).at(-1)`
			if got := eval[[]element](t, ctx, elements(last)); !has(got, "strong", "Packing list") || !has(got, "em", "wet") ||
				!has(got, "li", "Tent") || !has(got, "code", "stove") {
				t.Errorf("the Markdown reply was drawn as %+v", got)
			}
			if text := eval[string](t, ctx, last+`.textContent`); strings.Contains(text, "**") || strings.Contains(text, "`") {
				t.Errorf("the reply shows raw Markdown: %q", text)
			}
			run(t, ctx, "rate",
				click(reply+`.querySelector('[data-rating=down]')`),
				until(reply+`.querySelector('[data-rating=down]').getAttribute('aria-pressed') === 'true'`),
				until(reply+`.querySelector('form input') !== null`),
				do(reply+`.querySelector('form input').value = 'the tent is missing'`),
				do(reply+`.querySelector('form').requestSubmit()`),
				until(reply+`.querySelector('form') === null`),
			)
			screenshot(t, ctx, "widget-markdown-feedback")
			ds, _, err := w.rt.Dialogs().List(bg, op, "trail", dialog.DialogFilter{Feedback: "down"}, platform.ListOptions{})
			if err != nil || len(ds) != 1 || ds[0].Summary.FeedbackDown != 1 {
				t.Fatalf("dialogs rated down %+v, %v", ds, err)
			}
		})

		t.Run("after a reload the widget shows the visitor's rating", func(t *testing.T) {
			run(t, ctx, "reload",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(shadow+`.querySelectorAll('.rate[data-message]').length === 2 && `+reply+`.querySelector('[data-rating=down]').getAttribute('aria-pressed') === 'true'`),
			)
		})

		base := w.api.URL + "/admin/#/t/trail"
		t.Run("the admin finds the dialog by a word of the reply, with its rating and failed call", func(t *testing.T) {
			row := `document.querySelector('main tbody tr')`
			run(t, ctx, "search",
				chromedp.Navigate(base+"/dialogs"),
				until(`document.querySelector('input[name=q]') !== null && document.querySelectorAll('main tbody tr').length > 0`),
				do(`document.querySelector('input[name=q]').value = 'headlamp'`),
				do(`document.querySelector('input[name=q]').closest('form').requestSubmit()`),
				until(`document.querySelectorAll('main tbody tr').length === 1`),
				until(contains("document", "main tbody td.snippet", "Headlamp")),
				until(contains("document", "main tbody .badge.down", "1")),
				until(row+`.querySelector('.badge.failed') !== null`),
			)
			screenshot(t, ctx, "admin-dialog-search")
			run(t, ctx, "a word of no dialog",
				do(`document.querySelector('input[name=q]').value = 'hovercraft'`),
				do(`document.querySelector('input[name=q]').closest('form').requestSubmit()`),
				until(`document.querySelectorAll('main tbody tr').length === 0`),
				until(`!document.querySelector('main p.empty').hidden`),
			)
			run(t, ctx, "the feedback filter and the transcript",
				do(`document.querySelector('input[name=q]').value = ''`),
				do(`(() => { const s = document.querySelector('select[name=feedback]'); s.value = 'down'; s.dispatchEvent(new Event('change')); })()`),
				until(`document.querySelectorAll('main tbody tr').length === 1`),
				chromedp.Click(chromedp.CSS(`main tbody a`)),
				until(contains("document", ".transcript [data-feedback=down]", "thumbs down")),
				until(contains("document", ".transcript .feedback-note", "the tent is missing")),
				until(contains("document", "dl.facts", "0 up, 1 down")),
				until(contains("document", ".transcript details.tool.failed summary", "order_status")),
			)
			screenshot(t, ctx, "admin-dialog-feedback")
		})

		t.Run("the usage page charts the day's dialogs, messages and feedback", func(t *testing.T) {
			checkCharts(t, ctx, base)
		})
	})
}

// typeInTester replaces the request tester's sample arguments.
func typeInTester(args string) chromedp.Action[chromedp.Void] {
	return do(fmt.Sprintf(`(() => {
  const el = document.querySelector('[data-pointer="/tools/0"] details.tester textarea');
  el.value = %s;
  el.dispatchEvent(new Event('input', {bubbles: true}));
  return true;
})()`, js(args)))
}

// runEach is run, naming the step that failed.
func runEach(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for i, s := range steps {
		run(t, ctx, fmt.Sprintf("%s, step %d", what, i+1), s)
	}
}

// pastedSite is a customer's site whose page holds the snippet the console
// gave, once snippet is set.
func pastedSite(t *testing.T, snippet *atomic.Pointer[string]) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" || snippet.Load() == nil {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trail Co</title></head>
<body><h1>Trail Co</h1><p>Boots and tents.</p>%s</body></html>`, *snippet.Load())
	}))
	t.Cleanup(s.Close)
	return s
}
