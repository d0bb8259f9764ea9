package webtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/platform"
)

// A config with a typo: "greting" is not a field, and the UI must say
// where.
const typoConfig = `{
  "basic_settings": {"name": "Acme Support", "greting": "Hello"},
  "llm": {"model": "gpt-4o-mini"}
}`

// draftConfig is version 2: the first config with a new greeting.
func (w *world) draftConfig() string {
	return strings.ReplaceAll(strings.Replace(botConfig, "Hi! I am the Acme assistant.", "Howdy from the draft!", 1), "SHOP", w.shopURL)
}

// TestAdminAuthorsPreviewsAndPublishesABot walks the admin UI as an editor
// would: sign in with an API key, break the config and read the problem at
// its pointer, fix it and save version 2, chat with the draft in the
// preview, then publish it.
func TestAdminAuthorsPreviewsAndPublishesABot(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {

		t.Run("signing in with an API key shows the tenant's bots", func(t *testing.T) {
			run(t, ctx, "sign in",
				w.signInAs(w.adminKey, "acme"),
				until(contains("document", "main table a", "Acme Support")),
			)
		})

		t.Run("a config error is shown with its JSON pointer", func(t *testing.T) {
			run(t, ctx, "edit config",
				chromedp.Click(chromedp.CSS(`main table a`)),
				chromedp.WaitVisible(chromedp.CSS(`.tabs [data-view="json"]`)),
				chromedp.Click(chromedp.CSS(`.tabs [data-view="json"]`)),
				jsonViewShown,
				until(contains("document", ".pill", "Valid")),
				setEditor(typoConfig),
				until(contains("document", "#config-problems li", "line 2 /basic_settings/greting")),
			)
			t.Logf("problems shown: %s", eval[string](t, ctx, textOf("document", "#config-problems li")))
		})

		t.Run("saving the broken config is refused with the pointer", func(t *testing.T) {
			run(t, ctx, "save broken",
				chromedp.Click(chromedp.Search(`//button[text()="Save as new version"]`)),
				until(contains("document", ".alert.error li", "/basic_settings/greting")),
			)
		})

		t.Run("a fixed config saves as version 2", func(t *testing.T) {
			run(t, ctx, "save",
				setEditor(w.draftConfig()),
				until(contains("document", ".pill", "Valid")),
				chromedp.Click(chromedp.Search(`//button[text()="Save as new version"]`)),
				until(contains("document", ".alert.ok", "Saved as version 2")),
				until(contains("document", "table th", "v2")),
			)
		})

		t.Run("the changes of version 2 show the new greeting by pointer and as a diff", func(t *testing.T) {
			run(t, ctx, "diff",
				chromedp.Click(chromedp.Search(`//tr[th[starts-with(normalize-space(.), "v2")]]//button[text()="Changes"]`)),
				until(contains("document", ".diff .changes .change.replace code", "/basic_settings/greeting")),
				until(contains("document", ".diff pre.unified .line.del", "Hi! I am the Acme assistant.")),
				until(contains("document", ".diff pre.unified .line.add", "Howdy from the draft!")),
			)
			if n := eval[int](t, ctx, `document.querySelectorAll('.diff .changes li').length`); n != 1 {
				t.Errorf("%d changes listed; want 1 (the greeting)", n)
			}
		})

		t.Run("the preview chats with the draft and streams the reply", func(t *testing.T) {
			run(t, ctx, "preview",
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "Do you sell tents?"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				until(contains("document", ".chat-log .msg.bot", "Howdy from the draft!")),
				until(contains("document", ".chat-log .msg.bot", "Echo: Do you sell tents?")),
				until(contains("document", ".chat-log .meta", "1 turn")),
			)
		})

		t.Run("the preview draws a Markdown reply as the widget does", func(t *testing.T) {
			run(t, ctx, "preview Markdown",
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "show me Markdown"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				until(contains("document", ".chat-log .msg.bot pre", "window.pwned.push('fence')")),
			)
			last := `Array.from(document.querySelectorAll('.chat-log .msg.bot')).pop()`
			els := eval[[]element](t, ctx, elements(last))
			checkInert(t, els)
			for _, want := range []struct{ tag, text string }{{"h2", "Your order"}, {"a", "our shop"}, {"li", "Sleeping bag"}, {"pre", "curl https://shop.acme.example"}} {
				if !has(els, want.tag, want.text) {
					t.Errorf("the preview's reply has no <%s> with %q: %+v", want.tag, want.text, els)
				}
			}
		})

		t.Run("the preview answers a client tool request and shows its result", func(t *testing.T) {
			run(t, ctx, "client tool",
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "where am I?"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				chromedp.WaitVisible(chromedp.CSS(`.chat-log form.ask textarea`)),
				chromedp.SendKeys(chromedp.CSS(`.chat-log form.ask textarea`), `{"city":"Bergen"}`),
				chromedp.Click(chromedp.CSS(`.chat-log form.ask button[type="submit"]`)),
				until(contains("document", ".chat-log .msg.bot", `Tool said: {"city":"Bergen"}`)),
			)
		})

		t.Run("the preview asks to confirm a tool call and shows the call and its result", func(t *testing.T) {
			run(t, ctx, "confirm",
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "cancel order A1"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				until(contains("document", ".chat-log .ask strong", "cancel_order")),
				chromedp.Click(chromedp.Search(`//div[@class="ask"]//button[text()="Approve"]`)),
				until(contains("document", ".chat-log details.tool.ok summary", "cancel_order")),
				until(contains("document", ".chat-log details.tool.ok pre", "/orders/A1/cancel")),
				until(contains("document", ".chat-log .msg.bot", "Tool said:")),
			)
			if n := w.cancelled.Load(); n != 1 {
				t.Errorf("the shop was called %d times; want once, after approval", n)
			}
			screenshot(t, ctx, "admin-bot-page")
		})

		t.Run("publishing version 2 makes it live", func(t *testing.T) {
			run(t, ctx, "publish",
				chromedp.Click(chromedp.Search(`//tr[th[starts-with(normalize-space(.), "v2")]]//button[text()="Publish"]`)),
				until(contains("document", ".alert.ok", "Version 2 is live.")),
				until(contains("document", ".title-row .badge", "live: v2")),
				until(contains("document", ".from-code code.mcp-url", "/v1/tenants/acme/bots/support/mcp")),
			)
			bot, err := w.svc.Bots().Get(context.Background(), platform.Operator(), "acme", "support")
			if err != nil {
				t.Fatal(err)
			}
			if bot.PublishedVersion != 2 {
				t.Errorf("published version is %d after publishing in the UI; want 2", bot.PublishedVersion)
			}
		})

		t.Run("rolling back makes version 1 live again", func(t *testing.T) {
			run(t, ctx, "roll back",
				chromedp.Click(chromedp.Search(`//tr[th[starts-with(normalize-space(.), "v1")]]//button[text()="Roll back"]`)),
				until(contains("document", ".title-row .badge", "live: v1")),
			)
			bot, err := w.svc.Bots().Get(context.Background(), platform.Operator(), "acme", "support")
			if err != nil {
				t.Fatal(err)
			}
			if bot.PublishedVersion != 1 {
				t.Errorf("published version is %d after rolling back in the UI; want 1", bot.PublishedVersion)
			}
		})

		t.Run("a new bot starts from a valid config and opens its page", func(t *testing.T) {
			run(t, ctx, "new bot",
				chromedp.Click(chromedp.Search(`//nav//a[text()="Bots"]`)),
				chromedp.WaitVisible(chromedp.CSS(`input[name="slug"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="slug"]`), "sales"),
				chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "Acme Sales"),
				chromedp.Click(chromedp.Search(`//button[text()="Create bot"]`)),
				until(contains("document", "h1", "Acme Sales")),
				until(contains("document", ".pill", "Valid")),
			)
		})
	})
}

// setEditor replaces the text of the config editor's JSON view as a
// user's edit would (a CodeMirror transaction), which triggers live
// validation.
func setEditor(config string) chromedp.Action[chromedp.Void] {
	return do(fmt.Sprintf(`(async () => {
  document.querySelector('.tabs [data-view="json"]').click();
  const view = await %s;
  view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: %s}, userEvent: 'input'});
  return true;
})()`, editorView, js(config)))
}

// editorView is an expression for the JSON view's CodeMirror instance (a
// promise: the page imports the vendored module it already loaded).
const editorView = `import('/vendor/codemirror.js').then(m => m.EditorView.findFromDOM(` + codeEditor + `.querySelector('.cm-editor')))`

// codeEditor is an expression for the shadow root the JSON view draws in.
const codeEditor = `document.querySelector('.code-editor').shadowRoot`

// jsonViewShown waits until the JSON view is on screen.
var jsonViewShown = until(`(e => e !== null && e.offsetParent !== null)(document.querySelector('.json-pane:not([hidden]) .code-editor'))`)

// editorText is an expression for the JSON view's text.
const editorText = editorView + `.then(v => v.state.doc.toString())`

// editorSelection is an expression for the JSON view's selected text.
const editorSelection = editorView + `.then(v => v.state.sliceDoc(v.state.selection.main.from, v.state.selection.main.to))`
