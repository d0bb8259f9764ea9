package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestTheEditorWarnsOfAModelItsProviderDoesNotList names, in the form, a
// tenant provider that lists its models and a model it does not list: the
// warning shows at the model field and in the list under the editor, apart
// from errors, in the JSON view too (with its line); the config stays
// valid, saves, and the save says so. A listed model clears the warning.
func TestTheEditorWarnsOfAModelItsProviderDoesNotList(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.OpenSQLite(t))
	if _, err := w.svc.Providers().Put(context.Background(), platform.Operator(), "acme", "gateway", platform.ProviderSpec{
		Kind: "openai", BaseURL: "https://gw.acme.example/v1", Models: []string{"acme-large", "acme-small"}}); err != nil {
		t.Fatal(err)
	}
	ctx := tab(t, browser(t))
	run(t, ctx, "open the form and name an unlisted model",
		w.signInAs(w.adminKey, "acme"),
		until(contains("document", "main table a", "Acme Support")),
		chromedp.Click(chromedp.CSS(`main table a`)),
		chromedp.WaitVisible(chromedp.CSS(`.tabs [data-view="form"]`)),
		chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
		until(contains("document", ".pill", "Valid")),
		openSection("model"),
		until(`document.querySelector('[data-pointer="/llm/provider"] select option[value="gateway"]') !== null`),
		typeIn("/llm/provider", "select", "gateway"),
		typeIn("/llm/model", "input", "acme-huge"),
		until(contains("document", ".pill", "1 warning")),
	)
	screenshot(t, ctx, "admin-model-warning")

	t.Run("the warning is at the model field, apart from errors", func(t *testing.T) {
		if got := eval[string](t, ctx, textOf("document", `[data-pointer="/llm/model"] small.field-warning`)); !strings.Contains(got, `model "acme-huge" is not among provider "gateway"'s models (acme-large, acme-small)`) {
			t.Errorf("the model field's warning is %q", got)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('.config-form .invalid, small.field-problem').length`); n != 0 {
			t.Errorf("%d fields are marked invalid for a warning", n)
		}
		if got := eval[string](t, ctx, `document.querySelector('.pill').className`); !strings.Contains(got, "warn") {
			t.Errorf("the status pill is %q, want it marked as a warning", got)
		}
		if got := eval[string](t, ctx, textOf("document", "ul.problems li.warning")); !strings.Contains(got, "/llm/model") {
			t.Errorf("the list under the editor has the warnings %q", got)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('ul.problems li.error').length`); n != 0 {
			t.Errorf("the list under the editor has %d errors", n)
		}
	})

	t.Run("the JSON view leads to the warned line", func(t *testing.T) {
		run(t, ctx, "open the JSON view",
			chromedp.Click(chromedp.CSS(`.tabs [data-view="json"]`)),
			jsonViewShown,
			until(`document.querySelector('ul.problems li.warning button.link') !== null`),
			chromedp.Click(chromedp.CSS(`ul.problems li.warning button.link`)),
		)
		if got := eval[string](t, ctx, editorSelection); !strings.Contains(got, `"acme-huge"`) {
			t.Errorf("the warning's line link selects %q", got)
		}
	})

	t.Run("saving is not blocked and says what was warned", func(t *testing.T) {
		run(t, ctx, "save",
			chromedp.Click(chromedp.Search(`//button[text()="Save as new version"]`)),
			until(contains("document", ".alert.warn", "Saved with warnings")),
		)
		if got := eval[string](t, ctx, textOf("document", ".alert.warn li")); !strings.Contains(got, "/llm/model") || !strings.Contains(got, "acme-huge") {
			t.Errorf("the save's warnings read %q", got)
		}
		v, err := w.svc.Versions().Get(context.Background(), platform.Operator(), "acme", "support", 2)
		if err != nil || !strings.Contains(string(v.Config), `"acme-huge"`) {
			t.Errorf("version 2 = %s, %v; want the config with the warned model saved", v.Config, err)
		}
	})

	t.Run("a listed model clears the warning", func(t *testing.T) {
		run(t, ctx, "pick a listed model",
			chromedp.Click(chromedp.CSS(`.tabs [data-view="form"]`)),
			typeIn("/llm/model", "input", "acme-large"),
			until(`!document.querySelector('.pill').textContent.includes('warning') && document.querySelector('.pill').textContent.startsWith('Valid')`),
		)
		if n := eval[int](t, ctx, `document.querySelectorAll('small.field-warning, ul.problems li').length`); n != 0 {
			t.Errorf("%d warnings are still shown", n)
		}
	})
}
