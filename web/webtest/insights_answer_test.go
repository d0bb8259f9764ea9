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

// TestAnUnansweredQuestionBecomesAnAnswerTheBotCites closes the loop from
// the Insights page: the support bot searches an empty knowledge base for
// a question and finds nothing (a knowledge miss), the question is listed
// as unanswered, a reviewer adds an answer from its row (a Q&A source),
// the real worker indexes it, and the same question is now answered from
// it with a citation.
func TestAnUnansweredQuestionBecomesAnAnswerTheBotCites(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		if _, err := w.svc.Knowledge().CreateBase(bg, op, "acme", platform.KnowledgeBaseInput{Name: "Help center", Slug: "help"}); err != nil {
			t.Fatal(err)
		}
		config := strings.Replace(strings.ReplaceAll(botConfig, "SHOP", w.shopURL), `"llm":`, `"knowledge": {"bases": ["help"]}, "llm":`, 1)
		v, _, err := w.svc.Versions().Create(bg, op, "acme", "support", []byte(config))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Versions().Publish(bg, op, "acme", "support", v.Number); err != nil {
			t.Fatal(err)
		}
		const question = "how long do refunds take?"
		missed := w.talk(t, "u-refund", question)
		if _, err := w.rt.Dialogs().Close(bg, op, "acme", missed, "done"); err != nil {
			t.Fatal(err)
		}

		run(t, ctx, "answer the unanswered question", append(w.signInWithKey(),
			do(`location.hash = '#/t/acme/insights'`),
			until(contains("document", "li.question strong", question)),
			chromedp.Click(chromedp.CSS(`details.add-answer summary`)),
			chromedp.SetValue(chromedp.CSS(`details.add-answer textarea[name=answer]`), "Refunds take five business days after we receive the parcel."),
			chromedp.Click(chromedp.Search(`//button[text()="Add answer"]`)),
			until(contains("document", ".alert.ok", "Added")),
		)...)
		reason := eval[string](t, ctx, `document.querySelector('li.question').innerText`)
		if !strings.Contains(reason, "knowledge miss 1") {
			t.Errorf("the question's row reads %q, want its reason (a knowledge miss)", reason)
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
		sources, err := w.svc.Knowledge().ListSources(bg, op, "acme", "help")
		if err != nil || len(sources) != 1 || sources[0].Status != store.SourceReady {
			t.Fatalf("sources %+v, %v; want the Q&A, ready", sources, err)
		}

		answered := w.talk(t, "u-refund-again", question)
		d, err := w.rt.Dialogs().Get(bg, op, "acme", answered, "")
		if err != nil {
			t.Fatal(err)
		}
		last := d.Messages[len(d.Messages)-1]
		if last.Text != "Refunds take five business days [1]." || len(last.Citations) != 1 || last.Citations[0].Source != sources[0].ID {
			t.Fatalf("the bot answers %q citing %+v; want the Q&A cited", last.Text, last.Citations)
		}
		run(t, ctx, "the dialog shows the answer",
			do(`location.hash = '#/t/acme/dialogs/`+answered+`'`),
			until(contains("document", "main", "Refunds take five business days")),
		)
		screenshot(t, ctx, "admin-insights-answered")
	})
}
