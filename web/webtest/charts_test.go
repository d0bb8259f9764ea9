package webtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// checkCharts opens the usage page of the tenant at base (the console's
// "#/t/<tenant>" address), whose only end-user dialog today had a failed
// tool call and a reply rated down, and checks that its charts draw the
// day's dialogs, messages, tokens, tool errors and feedback, and hour by
// hour once switched to the last 24 or 48 hours.
func checkCharts(t *testing.T, ctx context.Context, base string) {
	t.Helper()
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
	if want := "Dialogs 1"; !strings.Contains(label, want) {
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

	for _, hours := range []int{24, 48} {
		run(t, ctx, fmt.Sprintf("the last %d hours", hours),
			do(fmt.Sprintf(`(() => { const s = document.querySelector('select[name=resolution]'); s.value = '%d'; s.dispatchEvent(new Event('change')); })()`, hours)),
			until(fmt.Sprintf(`document.querySelector('.charts[data-bucket=hour] svg[data-chart=dialogs] polyline[data-series=Dialogs]')?.getAttribute('points').split(' ').length === %d`, hours)),
		)
		label := eval[string](t, ctx, `document.querySelector('svg[data-chart=dialogs]').getAttribute('aria-label')`)
		if !strings.Contains(label, ":00 to ") || !strings.Contains(label, ": Dialogs 1, ") {
			t.Errorf("the hourly dialogs chart reads %q; want hours and the one dialog", label)
		}
		if n := points("dialogs", "Dialogs"); n != 1 {
			t.Errorf("the hourly chart draws %d points of dialogs; want the hour of the one dialog", n)
		}
		if n := points("feedback", "Thumbs down"); n != 1 {
			t.Errorf("the hourly chart draws %d points of thumbs down; want the hour of the rating", n)
		}
	}
	screenshot(t, ctx, "admin-usage-charts-hourly")
}
