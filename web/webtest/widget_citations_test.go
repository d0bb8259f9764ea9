package webtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
)

// refundsHelpPage is the help center page the knowledge base indexes; its
// heading's id is the anchor a footnote links to.
const refundsHelpPage = `<html><head><title>Refunds</title></head><body>
<h1 id="refunds">Refunds</h1><p>Refunds take five business days after we receive the parcel.</p></body></html>`

// withKnowledge gives the support bot a knowledge base "help" holding a
// help center page, indexed by the real worker, and publishes it;
// returns the page's URL.
func (w *world) withKnowledge(t *testing.T) string {
	t.Helper()
	pages := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, refundsHelpPage)
	}))
	t.Cleanup(pages.Close)
	ctx, op := context.Background(), platform.Operator()
	if _, err := w.svc.Knowledge().CreateBase(ctx, op, "acme", platform.KnowledgeBaseInput{Name: "Help"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.svc.Knowledge().AddSource(ctx, op, "acme", "help", platform.SourceInput{Kind: "url", URL: pages.URL + "/refunds"}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(pages.URL)
	port, _ := strconv.Atoi(u.Port())
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port})
	if err != nil {
		t.Fatal(err)
	}
	for worker := ingest.New(w.st, nil, ingest.Options{Outbound: policy}); ; {
		n, err := worker.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	config := strings.Replace(strings.ReplaceAll(botConfig, "SHOP", w.shopURL), `"llm":`, `"knowledge": {"bases": ["help"]}, "llm":`, 1)
	v, _, err := w.svc.Versions().Create(ctx, op, "acme", "support", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Versions().Publish(ctx, op, "acme", "support", v.Number); err != nil {
		t.Fatal(err)
	}
	return pages.URL + "/refunds"
}

// TestWidgetShowsCitationsAsFootnotes: a reply citing [1] gets a footnote
// under it linking to the cited page at its heading's anchor, while it
// streams and again after a reload; the admin preview shows it too, and
// the form edits the knowledge section.
func TestWidgetShowsCitationsAsFootnotes(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		page := w.withKnowledge(t)
		site := w.site(t)
		key := w.widgetKey(t, site.URL)
		footnote := shadow + `.querySelector('.sources li[data-n="1"] a')`
		run(t, ctx, "ask about refunds",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			send("How long do refunds take?"),
			until(contains(shadow, ".msg.bot", "Refunds take five business days [1].")),
			until(footnote+` !== null`),
		)
		screenshot(t, ctx, "widget-citations")
		check := func(t *testing.T) {
			t.Helper()
			if href := eval[string](t, ctx, footnote+`.href`); href != page+"#refunds" {
				t.Errorf("footnote links to %q, want %q", href, page+"#refunds")
			}
			if text := eval[string](t, ctx, textOf(shadow, ".sources li")); text != "[1] RefundsRefunds, #refunds" {
				t.Errorf("footnote reads %q", text)
			}
			if n := eval[int](t, ctx, shadow+`.querySelectorAll('.sources li').length`); n != 1 {
				t.Errorf("%d footnotes, want 1", n)
			}
		}
		t.Run("the streamed reply's footnote links to the page's heading", check)
		t.Run("a reload shows the stored reply's footnote", func(t *testing.T) {
			run(t, ctx, "reload",
				chromedp.Reload(),
				until(shadow+`.querySelector('.launcher') !== null`),
				click(shadow+`.querySelector('.launcher')`),
				until(footnote+` !== null`),
			)
			check(t)
		})
		t.Run("the admin preview shows the footnote too", func(t *testing.T) {
			link := `document.querySelector('.chat-log .sources li[data-n="1"] a')`
			run(t, ctx, "preview",
				w.signInAs(w.adminKey, "acme"),
				until(contains("document", "main table a", "Acme Support")),
				chromedp.Click(chromedp.CSS(`main table a`)),
				chromedp.WaitVisible(chromedp.CSS(`.composer input`)),
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "How long do refunds take?"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				until(contains("document", ".chat-log .msg.bot", "Refunds take five business days [1].")),
				until(link+` !== null`),
			)
			if href := eval[string](t, ctx, link+`.href`); href != page+"#refunds" {
				t.Errorf("the preview's footnote links to %q, want %q", href, page+"#refunds")
			}
		})
		t.Run("the form edits the knowledge section and marks an unknown base", func(t *testing.T) {
			picked := `document.querySelector('input[name="kb:help"]')`
			run(t, ctx, "form",
				do(`document.querySelector('details.form-section[data-section="knowledge"]').open = true`),
				until(picked+` !== null && `+picked+`.checked`),
				chromedp.Click(chromedp.CSS(`.tabs [data-view="json"]`)),
				jsonViewShown,
				do(editorView+`.then(v => { const c = JSON.parse(v.state.doc.toString()); c.knowledge.bases.push("nope");
  v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: JSON.stringify(c, null, 2)}}); })`),
				until(`document.body.innerText.includes('unknown knowledge base "nope"')`),
			)
		})
	})
}
