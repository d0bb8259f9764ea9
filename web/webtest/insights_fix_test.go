package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// TestABadDialogBecomesATestThatFailsUntilTheBotIsFixed: the support bot
// searches its (empty) help base for a question and cannot answer it. In
// the dialog's view a reviewer makes it a test whose search must find the
// refunds FAQ and saves it with the bot. From the bot's Tests card the
// test fails on that version and passes on a fixed one that also answers
// from the FAQ base: search_knowledge is never a fixture, so each version
// searches its own bases.
func TestABadDialogBecomesATestThatFailsUntilTheBotIsFixed(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		withBases := func(bases string) []byte {
			return []byte(strings.Replace(strings.ReplaceAll(botConfig, "SHOP", w.shopURL), `"llm":`, `"knowledge": {"bases": [`+bases+`]}, "llm":`, 1))
		}
		for _, kb := range []platform.KnowledgeBaseInput{{Name: "Help center", Slug: "help"}, {Name: "FAQ", Slug: "faq"}} {
			if _, err := w.svc.Knowledge().CreateBase(bg, op, "acme", kb); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := w.svc.Knowledge().AddSource(bg, op, "acme", "faq", platform.SourceInput{Kind: store.SourceQA, Title: "Refunds FAQ",
			QA: []platform.QAPair{{Question: "How long do refunds take?", Answer: "Five business days after we receive the parcel."}}}); err != nil {
			t.Fatal(err)
		}
		for worker := ingest.New(w.st, nil, ingest.Options{}); ; {
			n, err := worker.RunOnce(bg)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		v, _, err := w.svc.Versions().Create(bg, op, "acme", "support", withBases(`"help"`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Versions().Publish(bg, op, "acme", "support", v.Number); err != nil {
			t.Fatal(err)
		}
		bad := w.talk(t, "u-refund", "how long do refunds take?")

		run(t, ctx, "make the dialog a test", append(w.signInWithKey(),
			do(`location.hash = '#/t/acme/dialogs/`+bad+`'`),
			until(`!!document.querySelector('input[name=retrieved]')`),
			chromedp.SetValue(chromedp.CSS(`input[name=retrieved]`), "Refunds FAQ"),
			chromedp.Click(chromedp.CSS(`input[name=save]`)),
			chromedp.Click(chromedp.Search(`//button[text()="Make this a test"]`)),
			until(contains("document", "pre[data-test=support]", `"retrieved"`)),
			until(contains("document", ".to-test", "as version 3")),
		)...)
		if test := eval[string](t, ctx, `document.querySelector('pre[data-test=support]').innerText`); strings.Contains(test, `"search_knowledge": {`) {
			t.Fatalf("the test fixes search_knowledge's result:\n%s", test)
		}
		saved, err := w.st.Tenant(tenantID(t, w)).Versions().Get(bg, botID(t, w), 3)
		if err != nil {
			t.Fatal(err)
		}
		fixed, _, err := w.svc.Versions().CreateWithTests(bg, op, "acme", "support", withBases(`"help", "faq"`), []byte(saved.Tests))
		if err != nil {
			t.Fatal(err)
		}
		if fixed.Number != 4 {
			t.Fatalf("the fixed version is %d, want 4", fixed.Number)
		}

		runTests := func(version, want string) {
			t.Helper()
			run(t, ctx, "run v"+version+"'s tests",
				do(`location.hash = '#/t/acme/bots/support'`),
				until(`!!document.querySelector('select[name=tests-version] option[value="`+version+`"]')`),
				do(`(() => { const s = document.querySelector('select[name=tests-version]'); s.value = '`+version+`'; s.dispatchEvent(new Event('change')); })()`),
				chromedp.Click(chromedp.Search(`//button[text()="Run tests"]`)),
				until(contains("document", ".test-results .summary", want)),
			)
		}
		runTests("3", "v3: 0 passed, 1 failed")
		if got := eval[string](t, ctx, `document.querySelector('.test-results li.test.fail').innerText`); !strings.Contains(got, "Refunds FAQ is not among the sources retrieved") {
			t.Errorf("the failure reads %q", got)
		}
		runTests("4", "v4: 1 passed, 0 failed")
		screenshot(t, ctx, "admin-tests-fixed")
		if _, err := w.svc.Versions().Publish(bg, op, "acme", "support", fixed.Number); err != nil {
			t.Fatal(err)
		}
	})
}

func tenantID(t *testing.T, w *world) string {
	t.Helper()
	tn, err := w.st.Tenants().Get(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return tn.ID
}

func botID(t *testing.T, w *world) string {
	t.Helper()
	b, err := w.st.Tenant(tenantID(t, w)).Bots().Get(context.Background(), "support")
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}
