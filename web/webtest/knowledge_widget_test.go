package webtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/platform"
)

// TestAKnowledgeBaseBuiltInTheConsoleAnswersInTheWidget is the issue's
// "done when", end to end on the real server: a PDF and a Markdown file
// uploaded on the Knowledge page and a web page of a local server added
// there become ready; the base is attached to the bot, which is
// published; a visitor asks in the embedded widget and reads answers
// whose footnotes name the right place: a signed link that opens the
// uploaded PDF at its page (docs/knowledge.md), a link to the web page
// at its heading, and a link to a PDF on the web at its page (#page=N);
// the admin preview links the uploaded PDF too.
func TestAKnowledgeBaseBuiltInTheConsoleAnswersInTheWidget(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		pages := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/guide.pdf" {
				rw.Header().Set("Content-Type", "application/pdf")
				rw.Write(pdfOf("Seams", "Seal a leaking seam with the repair tape."))
				return
			}
			if r.URL.Path != "/returns" {
				http.NotFound(rw, r)
				return
			}
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, `<!doctype html><html><head><title>Returns</title></head><body>
<h1 id="returns">Returns</h1><p>You may send a kayak back within 45 days of delivery for a full refund.</p></body></html>`)
		}))
		t.Cleanup(pages.Close)
		w.startIndexer(t, pages.URL)
		dir := t.TempDir()
		manual := pdfOf("Tent pole repair", "Splint the broken pole with the aluminium sleeve.")
		for name, data := range map[string][]byte{
			"manual.pdf": manual,
			"stoves.md":  []byte("# Stove guide\n\n## Cleaning\n\nClean the burner jets with the needle tool after every trip.\n"),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		run(t, ctx, "build the base in the console", append(w.signInWithKey(),
			chromedp.Click(chromedp.Search(`//nav//a[text()="Knowledge"]`)),
			until(contains("document", "main .empty", "No knowledge bases yet. Create one below")),
			chromedp.SendKeys(chromedp.CSS(`main input[name="name"]`), "Help"),
			chromedp.Click(chromedp.Search(`//button[text()="Create knowledge base"]`)),
			until(contains("document", "main .empty", "No sources yet. Add files")),
			chromedp.SetUploadFiles(chromedp.CSS(`main input[type="file"]`), []string{filepath.Join(dir, "manual.pdf"), filepath.Join(dir, "stoves.md")}),
			until(`document.querySelectorAll('ul.upload-results li.ok').length === 2`),
			press(`#add-url-tab`),
			chromedp.WaitVisible(chromedp.CSS(`#add-url input[name="url"]`)),
			chromedp.SendKeys(chromedp.CSS(`#add-url input[name="url"]`), pages.URL+"/returns"),
			press(`#add-url button[type="submit"]`),
			until(contains("document", "main .add-result", "it is being read now")),
			do(`document.querySelector('#add-url input[name="url"]').value = ''`),
			chromedp.SendKeys(chromedp.CSS(`#add-url input[name="url"]`), pages.URL+"/guide.pdf"),
			press(`#add-url button[type="submit"]`),
			until(`document.querySelectorAll('tr.source.ready').length === 4`),
		)...)

		// The bot form's knowledge section is tested on its own
		// (TestKnowledgeSectionOfTheBotFormWritesTheConfig); here the
		// base is attached through the API, as a deploy script would.
		op := platform.Operator()
		config := strings.Replace(strings.ReplaceAll(botConfig, "SHOP", w.shopURL), `"llm":`, `"knowledge": {"bases": ["help"]}, "llm":`, 1)
		v, _, err := w.svc.Versions().Create(ctx, op, "acme", "support", []byte(config))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Versions().Publish(ctx, op, "acme", "support", v.Number); err != nil {
			t.Fatal(err)
		}

		site := w.site(t)
		key := w.widgetKey(t, site.URL)
		run(t, ctx, "ask about the tent pole",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			send("How do I repair a broken tent pole?"),
			until(contains(shadow, ".msg.bot", "Splint the broken pole with the aluminium sleeve [1].")),
			until(shadow+`.querySelectorAll('.sources li').length === 1`),
		)
		t.Run("the uploaded PDF's footnote names the file and its page and opens the file there", func(t *testing.T) {
			if text := eval[string](t, ctx, textOf(shadow, ".sources li")); text != "[1] manual.pdfp. 1" {
				t.Errorf("footnote reads %q", text)
			}
			href := eval[string](t, ctx, shadow+`.querySelector('.sources li a').href`)
			link, page, _ := strings.Cut(href, "#")
			if !strings.HasPrefix(link, w.api.URL+"/v1/knowledge/files/") || page != "page=1" {
				t.Fatalf("footnote links to %q, want a signed link to the file on the server at #page=1", href)
			}
			resp, err := http.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" || !bytes.Equal(got, manual) {
				t.Errorf("the link answers %d %s with %d bytes, want the uploaded PDF", resp.StatusCode, resp.Header.Get("Content-Type"), len(got))
			}
		})
		run(t, ctx, "ask about returns",
			send("Can I send a kayak back?"),
			until(contains(shadow, ".msg.bot", "Send the kayak back within 45 days [2].")),
			until(shadow+`.querySelectorAll('.sources li').length === 2`),
		)
		run(t, ctx, "ask about a seam",
			send("How do I fix a leaking seam?"),
			until(contains(shadow, ".msg.bot", "Seal the seam with the repair tape [")),
			until(shadow+`.querySelectorAll('.sources li').length === 3`),
		)
		// The run numbers its passages past every [n] of the dialog so far,
		// the earlier searches' passages included: the reply says which.
		reply := eval[string](t, ctx, "Array.from("+shadow+".querySelectorAll('.msg.bot')).pop().textContent")
		marker := reply[strings.LastIndex(reply, "[") : strings.LastIndex(reply, "]")+1]
		screenshot(t, ctx, "widget-knowledge-done")
		t.Run("the web page's footnote links to the page at its heading", func(t *testing.T) {
			link := shadow + `.querySelectorAll('.sources li a')`
			if n := eval[int](t, ctx, link+`.length`); n != 3 {
				t.Fatalf("%d linked footnotes, want 3", n)
			}
			if text := eval[string](t, ctx, link+`[1].textContent`); !strings.HasPrefix(text, "[2] ") {
				t.Errorf("the linked footnote reads %q, want the reply's [2]", text)
			}
			if href := eval[string](t, ctx, link+`[1].href`); href != pages.URL+"/returns#returns" {
				t.Errorf("footnote links to %q, want %q", href, pages.URL+"/returns#returns")
			}
		})
		t.Run("a PDF on the web is linked at its page", func(t *testing.T) {
			link := shadow + `.querySelectorAll('.sources li a')[2]`
			if text := eval[string](t, ctx, link+`.textContent`); !strings.HasPrefix(text, marker+" ") {
				t.Errorf("the linked footnote reads %q, want the reply's %s", text, marker)
			}
			if href := eval[string](t, ctx, link+`.href`); href != pages.URL+"/guide.pdf#page=1" {
				t.Errorf("footnote links to %q, want %q", href, pages.URL+"/guide.pdf#page=1")
			}
		})
		t.Run("the admin preview links the uploaded PDF's footnote to the file at its page", func(t *testing.T) {
			link := `document.querySelector('.chat-log .sources li[data-n="1"] a')`
			run(t, ctx, "preview",
				chromedp.Navigate(w.api.URL+"/admin/"), // still signed in with the key
				until(contains("document", "main table a", "Acme Support")),
				chromedp.Click(chromedp.CSS(`main table a`)),
				chromedp.WaitVisible(chromedp.CSS(`.composer input`)),
				chromedp.SendKeys(chromedp.CSS(`.composer input`), "How do I repair a broken tent pole?"),
				chromedp.Click(chromedp.CSS(`.composer button[type="submit"]`)),
				until(contains("document", ".chat-log .msg.bot", "Splint the broken pole with the aluminium sleeve [1].")),
				until(link+` !== null`),
			)
			href := eval[string](t, ctx, link+`.href`)
			if !strings.HasPrefix(href, w.api.URL+"/v1/knowledge/files/") || !strings.HasSuffix(href, "#page=1") {
				t.Errorf("the preview's footnote links to %q, want the signed link to the file at #page=1", href)
			}
		})
	})
}
