package webtest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/platform"
)

// The bot editor as people who do not write code use it (issue 28): work
// is never lost, problems show at their line, the preview sits beside
// the editor.

// draftStatus is an expression for the status of the signed-in key's
// draft of the support bot as the API answers it (204: none).
const draftStatus = `fetch('/v1/tenants/acme/bots/support/draft', {headers: {Authorization: 'Bearer ' + sessionStorage.getItem('parley.key')}}).then(r => r.status)`

// TestTheEditorKeepsADraftThatAnotherBrowserRestores types a change and
// leaves it unsaved: another browser, signed in as the same person, opens
// the bot with the change restored and a notice; Discard brings the saved
// version back, and saving a version drops the draft.
func TestTheEditorKeepsADraftThatAnotherBrowserRestores(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		typed := strings.Replace(strings.ReplaceAll(botConfig, "SHOP", w.shopURL), `"Acme Support"`, `"Acme Draft Support"`, 1)
		run(t, ctx, "type a change and wait for the autosave",
			steps(w.openBotPage()...),
			until(contains("document", ".pill", "Valid")),
			setEditor(typed),
			until(contains("document", ".draft-status", "Draft saved")),
		)
		if got := eval[int](t, ctx, draftStatus); got != 200 {
			t.Fatalf("the server answers %d for the draft; want 200", got)
		}

		other := tab(t, browser(t)) // another browser: no storage shared with the first
		t.Run("another browser restores the draft with a notice", func(t *testing.T) {
			run(t, other, "open the bot elsewhere",
				steps(w.openBotPage()...),
				until(contains("document", ".draft-notice", "Restored your unsaved draft from")),
			)
			if text := eval[string](t, other, editorText); !strings.Contains(text, "Acme Draft Support") {
				t.Errorf("the editor reads %q; want the typed change", text)
			}
		})
		t.Run("Discard brings back the saved version and drops the draft", func(t *testing.T) {
			run(t, other, "discard",
				chromedp.Click(chromedp.CSS(`.draft-notice .discard-draft`)),
				until(`!document.querySelector('.draft-notice .alert')`),
			)
			if text := eval[string](t, other, editorText); strings.Contains(text, "Acme Draft Support") {
				t.Errorf("after Discard the editor still reads the draft")
			}
			if got := eval[int](t, other, draftStatus); got != 204 {
				t.Errorf("after Discard the server answers %d for the draft; want 204 (none)", got)
			}
		})
		t.Run("saving a version drops the draft", func(t *testing.T) {
			run(t, ctx, "type again and save",
				setEditor(strings.Replace(typed, "Acme Draft Support", "Acme Saved Support", 1)),
				until(contains("document", ".draft-status", "Draft saved")),
				chromedp.Click(chromedp.CSS(`.toolbar button:not(.small)`)),
				until(contains("document", ".alert", "Saved as version 2")),
			)
			if got := eval[int](t, ctx, draftStatus); got != 204 {
				t.Errorf("after saving the server answers %d for the draft; want 204 (none)", got)
			}
		})
	})
}

// TestProblemsAreMarkedInTheGutterAndThePreviewSitsBesideTheEditor makes
// a config invalid: its problem is marked in the code editor's gutter at
// the problem's line and listed in view, above the editor. The preview
// chat is beside the editor at 1,280 px and under it at 400 px, and
// "Restart on draft" talks to what was typed.
func TestProblemsAreMarkedInTheGutterAndThePreviewSitsBesideTheEditor(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		config := strings.ReplaceAll(botConfig, "SHOP", w.shopURL)
		bad := strings.Replace(config, `"llm": {"model": "gpt-4o-mini"}`, `"llm": {"model": "gpt-4o-mini", "temperature": 7}`, 1)
		line := 1 + strings.Count(bad[:strings.Index(bad, `"temperature"`)], "\n")
		run(t, ctx, "open the bot and break a rule",
			chromedp.EmulateViewport(1280, 900),
			steps(w.openBotPage()...),
			until(contains("document", ".pill", "Valid")),
			setEditor(bad),
			until(contains("document", "#config-problems", "temperature")),
			until(codeEditor+`.querySelector('.cm-lint-marker-error') !== null`),
		)
		t.Run("the gutter marks the problem's line", func(t *testing.T) {
			// The marker sits in the gutter row level with the line.
			got := eval[int](t, ctx, fmt.Sprintf(`(() => {
  const root = %s;
  const marker = root.querySelector('.cm-lint-marker-error').getBoundingClientRect();
  const row = Array.from(root.querySelectorAll('.cm-lineNumbers .cm-gutterElement')).find(e => Math.abs(e.getBoundingClientRect().top - marker.top) < 10);
  return row ? Number(row.textContent) : 0;
})()`, codeEditor))
			if got != line {
				t.Errorf("the error marker is at line %d; want line %d", got, line)
			}
		})
		t.Run("the problems list is in view with the editor", func(t *testing.T) {
			above := eval[bool](t, ctx, `document.querySelector('#config-problems').getBoundingClientRect().bottom <= document.querySelector('.json-pane').getBoundingClientRect().top`)
			if !above {
				t.Error("the problems list is not above the editor")
			}
		})
		t.Run("the preview is beside the editor at 1280 px", func(t *testing.T) {
			side := eval[bool](t, ctx, `(() => { const e = document.querySelector('.json-pane').getBoundingClientRect(), p = document.querySelector('.preview-side').getBoundingClientRect(); return p.left >= e.right && p.top < e.bottom && p.bottom > 0 && p.top < innerHeight; })()`)
			if !side {
				t.Error("the preview chat is not beside the editor, in view")
			}
			screenshot(t, ctx, "console-editor-with-preview")
		})
		t.Run("Restart on draft talks to what was typed", func(t *testing.T) {
			run(t, ctx, "fix the config and restart the preview on it",
				setEditor(strings.Replace(config, `"Hi! I am the Acme assistant."`, `"Hello from the draft."`, 1)),
				until(contains("document", ".pill", "Valid")),
				chromedp.Click(chromedp.CSS(`.preview .try-draft`)),
				until(`document.querySelector('.preview select').value === '2'`),
				chromedp.SendKeys(chromedp.CSS(`.preview input[name="message"]`), "hello"),
				chromedp.Click(chromedp.CSS(`.preview button[type="submit"]`)),
				until(contains("document", ".preview .chat-log", "Hello from the draft.")),
				until(contains("document", ".preview .chat-log .meta", "tokens")),
			)
			if meta := eval[string](t, ctx, textOf("document", ".preview .chat-log .meta")); !regexp.MustCompile(`\d m?s · \d+ in / \d+ out tokens`).MatchString(meta) {
				t.Errorf("the reply's line reads %q; want its time and tokens", meta)
			}
			screenshot(t, ctx, "console-preview-on-draft")
		})
		t.Run("the preview is under the editor at 400 px", func(t *testing.T) {
			run(t, ctx, "narrow", chromedp.EmulateViewport(400, 900))
			stacked := eval[bool](t, ctx, `(() => { const e = document.querySelector('.workbench > .card').getBoundingClientRect(), p = document.querySelector('.preview-side').getBoundingClientRect(); return p.top >= e.bottom && document.documentElement.scrollWidth <= 400; })()`)
			if !stacked {
				t.Error("at 400 px the preview is not under the editor, or the page is wider than the window")
			}
			run(t, ctx, "reset", chromedp.EmulateReset())
		})
	})
}

// TestARefusedPrivateEndpointNamesEverySettingThatWouldAllowIt points a
// tool at a private address on another port: the form's hint says who
// may allow it, and the request tester names both settings with the
// exact values for the URL.
func TestARefusedPrivateEndpointNamesEverySettingThatWouldAllowIt(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		// The world allows 127.0.0.1/32 and the shop's port; 127.0.0.2 and
		// port 8081 are neither.
		config := strings.ReplaceAll(botConfig, "SHOP", "http://127.0.0.2:8081")
		run(t, ctx, "point the tool at a private server",
			steps(w.openBotPage()...),
			until(contains("document", ".pill", "Valid")),
			setEditor(config),
			until(contains("document", ".pill", "Valid")),
			chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
			openSection("tools"),
			chromedp.WaitVisible(field("/tools/1/endpoint/url", "input")),
		)
		if hint := eval[string](t, ctx, textOf("document", `[data-pointer="/tools/1/endpoint/url"]`)); !strings.Contains(hint, "PARLEY_OUTBOUND_ALLOW and PARLEY_OUTBOUND_PORTS") {
			t.Errorf("the URL's hint reads %q; want the settings named", hint)
		}
		run(t, ctx, "try the tool",
			chromedp.Click(chromedp.CSS(`[data-pointer="/tools/1"] details.tester summary`)),
			chromedp.Click(chromedp.CSS(`[data-pointer="/tools/1"] details.tester button`)),
			until(contains("document", `[data-pointer="/tools/1"] .trial`, "PARLEY_OUTBOUND")),
		)
		got := eval[string](t, ctx, textOf("document", `[data-pointer="/tools/1"] .trial`))
		if want := "PARLEY_OUTBOUND_ALLOW=127.0.0.2/32 PARLEY_OUTBOUND_PORTS=8081"; !strings.Contains(got, want) {
			t.Errorf("the tester says %q; want %q", got, want)
		}
	})
}

// cardShown is an expression: whether the card headed title is on the page.
func cardShown(title string) string {
	return fmt.Sprintf(`(c => c !== undefined && !c.hidden)(Array.from(document.querySelectorAll('section.card')).find(s => s.querySelector('h2')?.textContent === %s))`, js(title))
}

// TestANewBotStartsGuidedAndShowsCanaryOnlyWithTwoVersions starts from a
// tenant with no bots: the quick start says how a first answer comes, the
// guided start takes a name, what the bot is for and a first tool, and the
// new bot's page hides canary and comparison until a second version.
func TestANewBotStartsGuidedAndShowsCanaryOnlyWithTwoVersions(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		_, created, err := w.svc.Tenants().Create(context.Background(), platform.Operator(), platform.CreateTenantInput{Slug: "trail", Name: "Trail Co"})
		if err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "sign in to a tenant with no bots",
			w.signInAs(created.Key, "trail"),
			until(contains("document", "main .empty", "No bots yet")),
		)
		if quick := eval[string](t, ctx, textOf("document", "main .quick-start")); !strings.Contains(quick, "make run") || !strings.Contains(quick, "fake model") {
			t.Errorf("the quick start reads %q; want the run command and the fake model", quick)
		}
		run(t, ctx, "the guided start",
			chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "Trail Helper"),
			until(`document.querySelector('input[name="slug"]').value === 'trail-helper'`),
			chromedp.SendKeys(chromedp.CSS(`textarea[name="purpose"]`), "Answers questions about trail orders"),
			chromedp.Click(chromedp.CSS(`details.first-tool summary`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="tool_name"]`), "order_status"),
			chromedp.SendKeys(chromedp.CSS(`input[name="tool_description"]`), "Where an order is"),
			chromedp.SendKeys(chromedp.CSS(`input[name="tool_url"]`), w.shopURL+"/orders"),
			chromedp.Click(chromedp.Search(`//button[text()="Create bot"]`)),
			until(contains("document", "h1", "Trail Helper")),
			until(contains("document", ".pill", "Valid · 1 tool")),
		)
		text := eval[string](t, ctx, editorText)
		for _, want := range []string{`"description": "Answers questions about trail orders"`, `"name": "order_status"`, w.shopURL + "/orders"} {
			if !strings.Contains(text, want) {
				t.Errorf("the new bot's config lacks %s:\n%s", want, text)
			}
		}
		for _, title := range []string{"Canary", "Compare versions"} {
			if eval[bool](t, ctx, cardShown(title)) {
				t.Errorf("with one version the %s card shows", title)
			}
		}
		run(t, ctx, "save a second version",
			setEditor(strings.Replace(text, "Trail Helper", "Trail Guide", 1)),
			until(contains("document", ".pill", "Valid")),
			chromedp.Click(chromedp.CSS(`.toolbar button:not(.small)`)),
			until(contains("document", ".alert", "Saved as version 2")),
			until(cardShown("Canary")),
			until(cardShown("Compare versions")),
		)
	})
}

// TestAnActionBookPicksItsToolsFromTheBotsTools opens the form's action
// books: the tools are the bot's own and native tools, ticked, not typed.
func TestAnActionBookPicksItsToolsFromTheBotsTools(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		run(t, ctx, "add an action book and tick a tool",
			steps(w.openBotPage()...),
			until(contains("document", ".pill", "Valid")),
			chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
			openSection("action_books"),
			chromedp.Click(chromedp.Search(`//button[text()="+ Add an action book"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-pointer="/action_books/0/tools"] input[value="cancel_order"]`)),
			chromedp.SendKeys(field("/action_books/0/condition", "textarea"), "When the customer wants to cancel"),
			chromedp.SendKeys(field("/action_books/0/action", "textarea"), "Cancel the order they name"),
			chromedp.Click(chromedp.CSS(`[data-pointer="/action_books/0/tools"] input[value="cancel_order"]`)),
			until(contains("document", ".pill", "Valid")),
		)
		offered := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('[data-pointer="/action_books/0/tools"] input[type=checkbox]')).map(b => b.value)`)
		if strings.Join(offered, ",") != "locate,cancel_order,handoff_to_human" {
			t.Errorf("the action book offers %q; want the bot's tools", offered)
		}
		if text := eval[string](t, ctx, editorText); !strings.Contains(text, `"tools": [`) || !strings.Contains(text, `"cancel_order"`+"\n") {
			t.Errorf("the JSON does not list the ticked tool:\n%s", text)
		}
	})
}

// TestASecretIsChosenOrCreatedWhereAHeaderUsesIt creates a secret beside
// an HTTP tool's headers and puts it into a new Authorization header,
// without leaving the form or typing the placeholder.
func TestASecretIsChosenOrCreatedWhereAHeaderUsesIt(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		picker := `[data-pointer="/tools/1/endpoint/headers"] .secret-pick`
		run(t, ctx, "create a secret in the form and use it",
			steps(w.openBotPage()...),
			until(contains("document", ".pill", "Valid")),
			chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
			openSection("tools"),
			chromedp.WaitVisible(chromedp.CSS(picker+` select`)),
			until(`document.querySelector('`+picker+` select').value === '__new__'`), // the tenant has none yet
			chromedp.SendKeys(chromedp.CSS(picker+` input[name="new_secret_name"]`), "shop_token"),
			chromedp.SendKeys(chromedp.CSS(picker+` input[name="new_secret_value"]`), "s3cret-value"),
			chromedp.Click(chromedp.CSS(picker+` .new-secret button`)),
			until(`document.querySelector('`+picker+` select').value === 'shop_token'`),
			chromedp.Click(chromedp.CSS(picker+` .insert-secret`)),
			until(contains("document", ".pill", "Valid")),
		)
		text := eval[string](t, ctx, editorText)
		if !strings.Contains(text, `"Authorization": "Bearer {{secrets.shop_token}}"`) {
			t.Errorf("the JSON has no header with the secret:\n%s", text)
		}
		if strings.Contains(eval[string](t, ctx, `document.body.innerText`), "s3cret-value") {
			t.Error("the secret's value shows on the page")
		}
		secrets, err := w.svc.Secrets().ListNames(context.Background(), platform.Operator(), "acme")
		if err != nil || len(secrets) != 1 || secrets[0].Name != "shop_token" {
			t.Errorf("the tenant's secrets are %+v (%v); want shop_token", secrets, err)
		}
	})
}

// TestAProviderIsCreatedWhereTheBotChoosesIt creates a model provider
// from the form's provider list, its API key kept as a tenant secret, and
// the bot uses it.
func TestAProviderIsCreatedWhereTheBotChoosesIt(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		pick := `[data-pointer="/llm/provider"]`
		run(t, ctx, "create a provider in the form",
			steps(w.openBotPage()...),
			until(contains("document", ".pill", "Valid")),
			chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
			openSection("model"),
			until(`document.querySelector('`+pick+` select option[value="__new__"]') !== null`),
			typeIn("/llm/provider", "select", "__new__"),
			chromedp.WaitVisible(chromedp.CSS(pick+` input[name="new_provider_name"]`)),
			chromedp.SendKeys(chromedp.CSS(pick+` input[name="new_provider_name"]`), "claude"),
			chromedp.SetValue(chromedp.CSS(pick+` select[name="new_provider_kind"]`), "anthropic"),
			chromedp.SendKeys(chromedp.CSS(pick+` input[name="new_provider_key"]`), "sk-ant-test-key"),
			chromedp.Click(chromedp.CSS(pick+` .new-provider button`)),
			until(`document.querySelector('`+pick+` select[name="provider"]').value === 'claude'`),
			until(contains("document", ".pill", "Valid")),
		)
		if text := eval[string](t, ctx, editorText); !strings.Contains(text, `"provider": "claude"`) {
			t.Errorf("the config does not name the new provider:\n%s", text)
		}
		providers, err := w.svc.Providers().List(context.Background(), platform.Operator(), "acme")
		if err != nil || len(providers) != 1 || providers[0].Kind != "anthropic" || providers[0].APIKeySecret != "claude_api_key" {
			t.Errorf("the tenant's providers are %+v (%v)", providers, err)
		}
	})
}
