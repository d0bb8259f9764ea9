package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestFeedbackSearchAndCharts: a visitor rates a Markdown reply in the
// widget with a comment, and sees the rating again after a reload; an
// admin finds the dialog by a word of the reply, sees the rating and a
// failed tool call in the transcript, and the usage page draws charts of
// the day's activity.
func TestFeedbackSearchAndCharts(t *testing.T) {
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		failed := w.failedLocate(t)
		base := w.api.URL + "/admin/#/t/acme"
		reply := shadow + `.querySelector('.rate[data-message]')`

		t.Run("a visitor rates the Markdown reply thumbs down with a comment", func(t *testing.T) {
			run(t, ctx, "chat",
				chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
				send("show me Markdown"),
				until(contains(shadow, ".msg.bot li", "Sleeping bag")),
				until(reply+` !== null`),
			)
			if n := eval[int](t, ctx, shadow+`.querySelectorAll('.rate').length`); n != 1 {
				t.Fatalf("%d replies offer thumbs; want the one reply (not the greeting)", n)
			}
			run(t, ctx, "rate",
				click(reply+`.querySelector('[data-rating=down]')`),
				until(reply+`.querySelector('[data-rating=down]').getAttribute('aria-pressed') === 'true'`),
				until(reply+`.querySelector('form input') !== null`),
				do(reply+`.querySelector('form input').value = 'the tent is missing'`),
				do(reply+`.querySelector('form').requestSubmit()`),
				until(reply+`.querySelector('form') === null`),
			)
			screenshot(t, ctx, "widget-feedback")
			ds, _, err := w.rt.ListDialogs(context.Background(), platform.Operator(), "acme", dialog.DialogFilter{Feedback: "down"}, platform.ListOptions{})
			if err != nil || len(ds) != 1 || ds[0].Summary.FeedbackDown != 1 {
				t.Fatalf("dialogs rated down %+v, %v", ds, err)
			}
		})

		t.Run("after a reload the widget shows the visitor's rating", func(t *testing.T) {
			run(t, ctx, "reload",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(reply+` !== null && `+reply+`.querySelector('[data-rating=down]').getAttribute('aria-pressed') === 'true'`),
			)
		})

		t.Run("the admin finds the dialog by a word of the reply", func(t *testing.T) {
			run(t, ctx, "sign in", w.openBotPage()...)
			run(t, ctx, "search",
				chromedp.Navigate(base+"/dialogs"),
				until(`document.querySelectorAll('main tbody tr').length === 2`),
				do(`document.querySelector('input[name=q]').value = 'sleeping'`),
				do(`document.querySelector('input[name=q]').closest('form').requestSubmit()`),
				until(`document.querySelectorAll('main tbody tr').length === 1`),
				until(contains("document", "main tbody td.snippet", "Sleeping bag")),
				until(contains("document", "main tbody .badge.down", "1")),
			)
			screenshot(t, ctx, "admin-dialog-search")
			run(t, ctx, "a word of no dialog",
				do(`document.querySelector('input[name=q]').value = 'hovercraft'`),
				do(`document.querySelector('input[name=q]').closest('form').requestSubmit()`),
				until(`document.querySelectorAll('main tbody tr').length === 0`),
				until(`!document.querySelector('main p.empty').hidden`),
			)
		})

		t.Run("the feedback filter and the transcript show the rating", func(t *testing.T) {
			run(t, ctx, "filter",
				do(`document.querySelector('input[name=q]').value = ''`),
				do(`(() => { const s = document.querySelector('select[name=feedback]'); s.value = 'down'; s.dispatchEvent(new Event('change')); })()`),
				until(`document.querySelectorAll('main tbody tr').length === 1`),
				chromedp.Click(chromedp.CSS(`main tbody a`)),
				until(contains("document", ".transcript [data-feedback=down]", "thumbs down")),
				until(contains("document", ".transcript .feedback-note", "the tent is missing")),
				until(contains("document", "dl.facts", "0 up, 1 down")),
			)
			screenshot(t, ctx, "admin-dialog-feedback")
		})

		t.Run("a failed tool call is marked failed in the list and the transcript", func(t *testing.T) {
			run(t, ctx, "failed",
				chromedp.Navigate(base+"/dialogs"),
				until(`document.querySelector('main tbody tr[data-dialog="`+failed+`"] .badge.failed') !== null`),
				chromedp.Navigate(base+"/dialogs/"+failed),
				until(contains("document", ".transcript details.tool.failed summary", "failed")),
			)
		})

		t.Run("the usage page charts the day's dialogs, messages and feedback", func(t *testing.T) {
			run(t, ctx, "usage",
				chromedp.Navigate(base+"/usage"),
				until(`document.querySelectorAll('svg.chart').length === 7`),
			)
			points := func(chart, series string) int {
				return eval[int](t, ctx, `document.querySelectorAll('svg[data-chart=`+chart+`] circle[data-series="`+series+`"]').length`)
			}
			for _, c := range []struct{ chart, series string }{{"dialogs", "Dialogs"}, {"messages", "Messages"},
				{"tokens", "Input"}, {"tools", "Tool errors"}, {"feedback", "Thumbs down"}} {
				if n := points(c.chart, c.series); n != 1 {
					t.Errorf("chart %s draws %d points of %s; want today's", c.chart, n, c.series)
				}
			}
			if n := points("feedback", "Thumbs up"); n != 0 {
				t.Errorf("the feedback chart draws %d thumbs up; there were none", n)
			}
			label := eval[string](t, ctx, `document.querySelector('svg[data-chart=dialogs]').getAttribute('aria-label')`)
			if want := "Dialogs 2"; !strings.Contains(label, want) {
				t.Errorf("the dialogs chart reads %q; want it to say %q", label, want)
			}
			if n := points("feedback-rate", "Thumbs up share"); n != 1 {
				t.Errorf("the rate chart draws %d points; want today's 0%%", n)
			}
			rate := eval[string](t, ctx, `document.querySelector('svg[data-chart=feedback-rate]').getAttribute('aria-label')`)
			if !strings.HasSuffix(rate, "Thumbs up share 0%") {
				t.Errorf("the rate chart reads %q", rate)
			}
			run(t, ctx, "rate", until(contains("document", ".chart-box p.muted", "Positive rate 0% (0 up, 1 down)")))
			screenshot(t, ctx, "admin-usage-charts")
		})
	})
}

// failedLocate makes a dialog through the API whose client tool locate
// failed, and returns its id.
func (w *world) failedLocate(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	c := apiclient.New(w.api.URL, w.adminKey)
	d, err := c.CreateDialog(ctx, "acme", "support", apiclient.CreateDialogRequest{UserID: "u-9"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := c.SendMessage(ctx, "acme", d.ID, "where am I?")
	if err != nil || len(turn.Pending) != 1 {
		t.Fatalf("turn %+v, %v; want the locate call pending", turn, err)
	}
	if _, err := c.SubmitToolResults(ctx, "acme", d.ID, []apiclient.ToolResult{{ID: turn.Pending[0].ID, Content: "GPS is off", IsError: true}}); err != nil {
		t.Fatal(err)
	}
	return d.ID
}
