package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestInsightsPageShowsRatesVersionsAndUnansweredQuestions reads the
// Insights page after a resolved and a handed-off dialog: the rates, the
// outcome chart, the live version compared, the unanswered question with
// its dialog and an answer added to a knowledge base; then, in a
// dialog's view, sets labels and makes the dialog a test.
func TestInsightsPageShowsRatesVersionsAndUnansweredQuestions(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		resolved := w.talk(t, "u-hello", "hello")
		handed := w.talk(t, "u-person", "I want to talk to a person")
		if _, err := w.rt.Handoffs().Assign(bg, op, "acme", handed, "Ada"); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{resolved, handed} {
			if _, err := w.rt.Dialogs().Close(bg, op, "acme", d, "done"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.svc.Knowledge().CreateBase(bg, op, "acme", platform.KnowledgeBaseInput{Name: "Help center", Slug: "help"}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "open insights", append(w.signInWithKey(),
			do(`location.hash = '#/t/acme/insights'`),
			until(`document.querySelector('.insights')?.dataset.dialogs === '2'`))...)
		stat := func(name string) string {
			return eval[string](t, ctx, `document.querySelector('[data-stat=`+name+`] strong').innerText`)
		}
		if got := stat("resolution_rate"); got != "50% (1)" {
			t.Errorf("resolution reads %q", got)
		}
		if got := stat("handoff_rate"); got != "50% (1)" {
			t.Errorf("handoff reads %q", got)
		}
		// Taken at once: the mean rounds to seconds, the median is the
		// first bucket's bound.
		if got := stat("handoff_take_ms"); !strings.HasSuffix(got, " s (half within 30 s)") {
			t.Errorf("time to take reads %q", got)
		}
		if got := stat("operator_reply_ms"); got != "—" {
			t.Errorf("operator reply reads %q; nobody wrote during the handoff", got)
		}
		label := eval[string](t, ctx, `document.querySelector('svg[data-chart=outcomes]').getAttribute('aria-label')`)
		if !strings.Contains(label, "Resolved 1") || !strings.Contains(label, "Handed off 1") {
			t.Errorf("the outcomes chart reads %q", label)
		}

		t.Run("the unanswered question links its dialog and takes an answer", func(t *testing.T) {
			run(t, ctx, "open its dialogs",
				until(contains("document", "li.question strong", "I want to talk to a person")),
				chromedp.Click(chromedp.Search(`//button[text()="Open dialogs"]`)),
				until(`!!document.querySelector('li.question ul.links:not([hidden]) a[href$="/dialogs/`+handed+`"]')`),
			)
			run(t, ctx, "add an answer",
				chromedp.Click(chromedp.CSS(`details.add-answer summary`)),
				chromedp.SetValue(chromedp.CSS(`details.add-answer textarea[name=answer]`), "Write to help@acme.test and a person answers within a day."),
				chromedp.Click(chromedp.Search(`//button[text()="Add answer"]`)),
				until(contains("document", ".alert.ok", "Added")),
			)
			sources, err := w.svc.Knowledge().ListSources(bg, op, "acme", "help")
			if err != nil || len(sources) != 1 {
				t.Fatalf("sources %+v, %v; want the Q&A", sources, err)
			}
		})

		t.Run("the live version is compared, with too few dialogs said so", func(t *testing.T) {
			run(t, ctx, "pick the bot",
				do(`(() => { const s = document.querySelector('select[name=bot]'); s.value = 'support'; s.dispatchEvent(new Event('change')); })()`),
				until(contains("document", `tr[data-role=live]`, "not enough dialogs yet")),
			)
			screenshot(t, ctx, "admin-insights")
		})

		t.Run("a dialog gets labels and becomes a test", func(t *testing.T) {
			run(t, ctx, "open the dialog",
				do(`location.hash = '#/t/acme/dialogs/`+resolved+`'`),
				until(contains("document", "dd[data-outcome=resolved]", "resolved")),
				chromedp.SetValue(chromedp.CSS(`input[name=labels]`), "greeting, vip"),
				chromedp.Click(chromedp.Search(`//button[text()="Save labels"]`)),
				until(contains("document", "dd span[role=status]", "Saved.")),
				chromedp.SetValue(chromedp.CSS(`input[name=reply_contains]`), "Echo"),
				chromedp.Click(chromedp.Search(`//button[text()="Make this a test"]`)),
				until(contains("document", "pre[data-test=support]", `"reply_contains"`)),
			)
			d, err := w.rt.Dialogs().Get(bg, op, "acme", resolved, "")
			if err != nil || strings.Join(d.Labels, ",") != "greeting,vip" {
				t.Fatalf("labels %v, %v", d.Labels, err)
			}
		})
	})
}

// TestWidgetAsksForARatingWhenTheDialogEnds closes the visitor's dialog:
// the next message finds it ended, the widget says so and asks for one
// to five stars, and the stars given become the dialog's rating.
func TestWidgetAsksForARatingWhenTheDialogEnds(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		key := w.widgetKey(t, site.URL)
		run(t, ctx, "chat",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			send("Where is my order?"),
			until(contains(shadow, ".msg.bot", "Echo: Where is my order?")),
		)
		op, bg := platform.Operator(), context.Background()
		ds, _, err := w.rt.Dialogs().List(bg, op, "acme", dialog.DialogFilter{}, platform.ListOptions{})
		if err != nil || len(ds) != 1 {
			t.Fatalf("dialogs %+v, %v", ds, err)
		}
		if _, err := w.rt.Dialogs().Close(bg, op, "acme", ds[0].ID, "answered"); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "rate",
			send("one more thing"),
			until(shadow+`.querySelector('.rate.stars button[data-stars="4"]') !== null`),
			click(shadow+`.querySelector('.rate.stars button[data-stars="4"]')`),
			until(contains(shadow, ".rate.stars", "Thanks for your feedback.")),
		)
		d, err := w.rt.Dialogs().Get(bg, op, "acme", ds[0].ID, "")
		if err != nil || d.Rating != 4 || d.Outcome != dialog.OutcomeResolved {
			t.Fatalf("the dialog's rating %d, outcome %q, %v; want 4 and resolved", d.Rating, d.Outcome, err)
		}
	})
}
