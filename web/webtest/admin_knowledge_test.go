package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// TestKnowledgeBaseIsBuiltAndSearchedInTheConsole is the walk
// for a person who does not write code: create a knowledge base, upload a
// PDF and a Markdown file with the upload control, add a web page served
// by a local server, watch each become ready, and see a retrieval test
// rank the right chunk first; read a source's chunks, see why an
// unsupported file failed and a problem at the field it names, rename the
// base, and find a viewer searching it without the controls to change it.
func TestKnowledgeBaseIsBuiltAndSearchedInTheConsole(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		release := make(chan struct{}) // lets the page /slow answer
		site := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
				fmt.Fprint(rw, "Opening hours: the shop opens at nine.")
				return
			}
			if r.URL.Path != "/returns" {
				http.NotFound(rw, r)
				return
			}
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, `<!doctype html><html><head><title>Returns</title></head><body><nav>Home · Shop</nav>
<h1>Returns</h1><p>You may send a kayak back within 45 days of delivery for a full refund.</p></body></html>`)
		}))
		t.Cleanup(site.Close)
		w.startIndexer(t, site.URL)

		dir := t.TempDir()
		files := map[string][]byte{
			"manual.pdf": pdfOf("Tent pole repair", "Splint the broken pole with the aluminium sleeve."),
			"stoves.md":  []byte("# Stove guide\n\n## Cleaning\n\nClean the burner jets with the needle tool after every trip.\n\n## Fuel\n\nCarry white gas in a red bottle.\n"),
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		base := w.api.URL + "/admin/#/t/acme"
		run(t, ctx, "sign in", w.signInWithKey()...)

		t.Run("an empty tenant is told what to do and creates a base", func(t *testing.T) {
			run(t, ctx, "create",
				chromedp.Click(chromedp.Search(`//nav//a[text()="Knowledge"]`)),
				until(contains("document", "main .empty", "No knowledge bases yet. Create one below")),
				chromedp.SendKeys(chromedp.CSS(`main input[name="name"]`), "???"),
				chromedp.Click(chromedp.Search(`//button[text()="Create knowledge base"]`)),
				until(contains("document", `main [data-pointer="/slug"] small.field-problem`, "lowercase letters, digits or hyphens")),
			)
			if focused := eval[string](t, ctx, `document.activeElement.name`); focused != "slug" {
				t.Errorf("after the refusal the focus is on %q; want the slug", focused)
			}
			run(t, ctx, "create with a name that makes a slug",
				do(`document.querySelector('main input[name="name"]').value = ''`),
				chromedp.SendKeys(chromedp.CSS(`main input[name="name"]`), "Help Center"),
				chromedp.Click(chromedp.Search(`//button[text()="Create knowledge base"]`)),
				until(contains("document", "main h1", "Help Center")),
				until(contains("document", "main .empty", "No sources yet. Add files")),
			)
			if got := eval[string](t, ctx, `location.hash`); got != "#/t/acme/knowledge/help-center" {
				t.Errorf("after creating the base the address is %q", got)
			}
		})

		t.Run("a PDF and a Markdown file are uploaded with the file picker", func(t *testing.T) {
			run(t, ctx, "upload",
				chromedp.SetUploadFiles(chromedp.CSS(`main input[type="file"]`), []string{filepath.Join(dir, "manual.pdf"), filepath.Join(dir, "stoves.md")}),
				until(`document.querySelectorAll('ul.upload-results li.ok').length === 2`),
			)
			if got := eval[string](t, ctx, textOf("document", "ul.upload-results li")); !strings.Contains(got, "manual.pdf: added") || !strings.Contains(got, "stoves.md: added") {
				t.Errorf("the upload says %q", got)
			}
		})

		t.Run("a web page of a local server is added to be read every day", func(t *testing.T) {
			run(t, ctx, "add the page",
				press(`#add-url-tab`),
				chromedp.WaitVisible(chromedp.CSS(`#add-url input[name="url"]`)),
				chromedp.SendKeys(chromedp.CSS(`#add-url input[name="url"]`), site.URL+"/returns"),
				chromedp.SetValue(chromedp.CSS(`#add-url select[name="refresh"]`), "24h"),
				chromedp.SendKeys(chromedp.CSS(`#add-url input[name="tags"]`), "policy, returns"),
				press(`#add-url button[type="submit"]`),
				until(contains("document", "main .add-result", "it is being read now")),
			)
		})

		t.Run("each source becomes ready in the list without a reload", func(t *testing.T) {
			run(t, ctx, "wait", until(`document.querySelectorAll('tr.source.ready').length === 3`))
			if got := eval[string](t, ctx, textOf("document", ".sources-summary")); got != "3 sources: 3 ready" {
				t.Errorf("the summary says %q", got)
			}
			row := eval[string](t, ctx, textOf("document", `tr.source:has(code.tag)`))
			for _, want := range []string{"Web page", site.URL + "/returns", "fetched again every day", "policy", "returns", "ready", "1 chunk"} {
				if !strings.Contains(row, want) {
					t.Errorf("the page's row %q lacks %q", row, want)
				}
			}
			if pdf := eval[string](t, ctx, textOf("document", `tr.source:has(td.source-title strong)`)); !strings.Contains(pdf, "1 page") {
				t.Errorf("the rows %q do not count the PDF's page", pdf)
			}
			screenshot(t, ctx, "admin-knowledge-base")
		})

		t.Run("the retrieval test ranks the right chunk first", func(t *testing.T) {
			for _, c := range []struct{ query, source, text, locator string }{
				{"splint aluminium sleeve", "manual.pdf", "aluminium sleeve", "p. 1"},
				{"burner jets needle", "stoves.md", "burner jets", "Stove guide > Cleaning"},
				{"kayak refund days", "Returns", "within 45 days", ""},
			} {
				run(t, ctx, "search "+c.query,
					do(`document.querySelector('main .search-results').replaceChildren()`),
					chromedp.SetValue(chromedp.CSS(`main input[name="query"]`), c.query),
					press(`main form:has(input[name="query"]) button[type="submit"]`),
					until(`document.querySelector('ol.results li.result') !== null`),
				)
				first := eval[string](t, ctx, `document.querySelector('ol.results li.result').textContent`)
				source := eval[string](t, ctx, `document.querySelector('ol.results li.result .result-source').textContent`)
				if source != c.source || !strings.Contains(first, c.text) || !strings.Contains(first, c.locator) || !strings.Contains(first, "keyword #1") || !strings.Contains(first, "score ") {
					t.Errorf("for %q the first result is %q of %q; want the chunk of %s with %q at %q, first by keyword", c.query, first, source, c.source, c.text, c.locator)
				}
			}
			screenshot(t, ctx, "admin-knowledge-search")
			run(t, ctx, "search with a tag",
				do(`document.querySelector('main .search-results').replaceChildren()`),
				chromedp.SetValue(chromedp.CSS(`main input[name="query"]`), "burner jets needle"),
				do(`document.querySelector('main form:has(input[name="query"]) input[name="tags"]').value = 'returns'`),
				press(`main form:has(input[name="query"]) button[type="submit"]`),
				until(`document.querySelector('main .search-results').textContent !== ''`),
			)
			if got := eval[string](t, ctx, textOf("document", "ol.results li.result .chunk-text")); strings.Contains(got, "burner") {
				t.Errorf("the search kept to the tag returns finds the stove guide: %q", got)
			}
		})

		t.Run("a source's chunks show with their locators", func(t *testing.T) {
			run(t, ctx, "chunks",
				chromedp.Click(chromedp.Search(`//tr[td/strong[text()="stoves.md"]]//button[text()="Chunks"]`)),
				until(`document.querySelectorAll('li.chunk').length >= 2`),
			)
			if focused := eval[string](t, ctx, `document.activeElement.querySelector('h2')?.textContent || ''`); focused != "Chunks of “stoves.md”" {
				t.Errorf("the focus is not on the shown chunks but in %q", focused)
			}
			got := eval[string](t, ctx, textOf("document", "li.chunk"))
			for _, want := range []string{"Cleaning", "Clean the burner jets", "Fuel", "white gas"} {
				if !strings.Contains(got, want) {
					t.Errorf("the chunks %q lack %q", got, want)
				}
			}
		})

		t.Run("an unsupported file dropped on the page fails with its reason in words", func(t *testing.T) {
			run(t, ctx, "drop",
				press(`#add-files-tab`),
				do(`(() => {
  const files = new DataTransfer();
  files.items.add(new File([new Uint8Array([0, 1, 254, 255, 16, 128])], 'notes.bin', {type: 'application/octet-stream'}));
  document.querySelector('.dropzone').dispatchEvent(new DragEvent('drop', {dataTransfer: files, bubbles: true, cancelable: true}));
  return true;
})()`),
				until(contains("document", "ul.upload-results li.ok", "notes.bin: added")),
				until(`document.querySelector('tr.source.failed .source-error') !== null`),
			)
			if got := eval[string](t, ctx, textOf("document", "tr.source.failed td.status")); !strings.Contains(got, "cannot tell the format") || !strings.Contains(got, "Retry") {
				t.Errorf("the failed source says %q; want the reason and what to do", got)
			}
			run(t, ctx, "delete it",
				do(`window.confirm = () => true`),
				chromedp.Click(chromedp.Search(`//tr[td/strong[text()="notes.bin"]]//button[text()="Delete"]`)),
				until(`document.querySelector('tr.source.failed') === null && document.querySelectorAll('tr.source').length === 3`),
			)
		})

		t.Run("a missing answer is shown at its field", func(t *testing.T) {
			run(t, ctx, "questions",
				press(`#add-qa-tab`),
				chromedp.SendKeys(chromedp.CSS(`#add-qa textarea[name="question"]`), "Do you ship abroad?"),
				press(`#add-qa button.ghost:not([aria-label])`),
				chromedp.SendKeys(chromedp.CSS(`#add-qa tr[data-pointer="/qa/1"] textarea[name="question"]`), "Can I pay by invoice?"),
				chromedp.SendKeys(chromedp.CSS(`#add-qa tr[data-pointer="/qa/1"] textarea[name="answer"]`), "Yes, within 14 days."),
				press(`#add-qa button[type="submit"]`),
				until(contains("document", `#add-qa [data-pointer="/qa/0/answer"] small.field-problem`, "is required")),
			)
			if focused := eval[string](t, ctx, `document.activeElement.closest('[data-pointer]')?.dataset.pointer || ''`); focused != "/qa/0/answer" {
				t.Errorf("after the refusal the focus is at %q; want the missing answer", focused)
			}
			screenshot(t, ctx, "admin-knowledge-problem")
			run(t, ctx, "answer",
				chromedp.SendKeys(chromedp.CSS(`#add-qa tr[data-pointer="/qa/0"] textarea[name="answer"]`), "Yes, to every EU country."),
				press(`#add-qa button[type="submit"]`),
				until(contains("document", "main .add-result", "it is being read now")),
				until(`document.querySelectorAll('tr.source.ready').length === 4`),
			)
			if n := eval[int](t, ctx, `document.querySelectorAll('#add-qa small.field-problem').length`); n != 0 {
				t.Errorf("%d problems stay shown after the pairs were added", n)
			}
		})

		t.Run("the focus stays on a source's button while its status changes", func(t *testing.T) {
			run(t, ctx, "add a page that answers when released",
				press(`#add-url-tab`),
				chromedp.SendKeys(chromedp.CSS(`#add-url input[name="url"]`), site.URL+"/slow"),
				press(`#add-url button[type="submit"]`),
				until(`document.querySelector('tr.source.indexing') !== null`),
				do(`document.querySelector('tr.source.indexing button').focus()`),
			)
			close(release)
			run(t, ctx, "wait for it", until(`document.querySelectorAll('tr.source.ready').length === 5`))
			if got := eval[string](t, ctx, `document.activeElement.textContent + ' in ' + (document.activeElement.closest('tr.source.ready td.source-title')?.textContent || document.activeElement.closest('tr')?.querySelector('td.source-title')?.textContent || 'no row')`); !strings.HasPrefix(got, "Chunks in ") || !strings.Contains(got, "/slow") {
				t.Errorf("after the source became ready the focus is on %q; want its Chunks button", got)
			}
		})

		t.Run("the base is renamed and listed", func(t *testing.T) {
			run(t, ctx, "rename",
				do(`document.querySelector('main input[name="name"]').value = ''`),
				chromedp.SendKeys(chromedp.CSS(`main input[name="name"]`), "Help Centre"),
				chromedp.Click(chromedp.Search(`//button[text()="Rename"]`)),
				until(contains("document", "main h1", "Help Centre")),
				chromedp.Navigate(base+"/knowledge"),
				until(contains("document", `tr[data-kb="help-center"] a`, "Help Centre")),
			)
			screenshot(t, ctx, "admin-knowledge-list")
		})

		t.Run("a viewer searches the base but cannot change it", func(t *testing.T) {
			const email, password = "vera@acme.test", "quiet meadow lantern"
			op, bg := platform.Operator(), context.Background()
			if _, err := w.svc.Users().Create(bg, op, email, password); err != nil {
				t.Fatal(err)
			}
			if _, err := w.svc.Members().Add(bg, op, "acme", email, "viewer"); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "viewer signs in",
				do(`sessionStorage.clear()`),
				chromedp.Navigate(w.api.URL+"/admin/"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), email),
				chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
				chromedp.Click(chromedp.CSS(`form:has(input[name="email"]) button[type="submit"]`)),
				until(contains("document", ".who", email)),
				chromedp.Click(chromedp.Search(`//nav//a[text()="Knowledge"]`)),
				until(contains("document", `tr[data-kb="help-center"] a`, "Help Centre")),
			)
			if n := eval[int](t, ctx, `document.querySelectorAll('main button.danger, main input[name="name"]').length`); n != 0 {
				t.Errorf("the viewer's list has %d controls to change bases", n)
			}
			run(t, ctx, "open and search",
				chromedp.Click(chromedp.CSS(`tr[data-kb="help-center"] a`)),
				until(`document.querySelectorAll('tr.source').length === 5`),
				chromedp.SendKeys(chromedp.CSS(`main input[name="query"]`), "ship abroad"),
				press(`main form:has(input[name="query"]) button[type="submit"]`),
				until(contains("document", "ol.results li.result .chunk-text", "every EU country")),
			)
			if n := eval[int](t, ctx, `document.querySelectorAll('main input[type="file"], main button.danger, #add-url, main form:has(button[type=submit]) input[name="name"]').length`); n != 0 {
				t.Errorf("the viewer's base page has %d controls to change it", n)
			}
			if got := eval[string](t, ctx, textOf("document", "tr.source td.actions button")); strings.Contains(got, "Retry") || strings.Contains(got, "Refresh") {
				t.Errorf("the viewer is offered %q", got)
			}
		})

		t.Run("an admin deletes the base after confirming", func(t *testing.T) {
			run(t, ctx, "delete",
				chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
				chromedp.WaitVisible(chromedp.CSS(`main.signin input[name="api_key"]`)),
				w.signInAs(w.adminKey, "acme"),
				until(contains("document", ".who", "key sk_")),
				chromedp.Navigate(base+"/knowledge"),
				until(`document.querySelector('tr[data-kb="help-center"]') !== null`),
				do(`window.confirm = (text) => { window.asked = text; return true; }`),
				chromedp.Click(chromedp.Search(`//tr[@data-kb="help-center"]//button[text()="Delete"]`)),
				until(contains("document", "main .empty", "No knowledge bases yet")),
			)
			if asked := eval[string](t, ctx, `window.asked`); !strings.Contains(asked, "Help Centre") || !strings.Contains(asked, "cannot be undone") {
				t.Errorf("the confirmation asked %q", asked)
			}
			if bases, err := w.svc.Knowledge().ListBases(context.Background(), platform.Operator(), "acme"); err != nil || len(bases) != 0 {
				t.Errorf("after deleting, the tenant has the bases %+v (%v)", bases, err)
			}
		})
	})
}

// TestKnowledgeSectionOfTheBotFormWritesTheConfig picks a knowledge base
// and its settings in the bot form and reads them in the config's JSON
// under "knowledge" with the config's own field names.
func TestKnowledgeSectionOfTheBotFormWritesTheConfig(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		for _, name := range []string{"Help Center", "Price List"} {
			if _, err := w.svc.Knowledge().CreateBase(bg, op, "acme", platform.KnowledgeBaseInput{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		run(t, ctx, "fill the section", append(w.openBotPage(),
			chromedp.WaitVisible(field("/basic_settings/name", "input")),
			openSection("knowledge"),
			until(`document.querySelector('input[name="kb:price-list"]') !== null`),
			chromedp.Click(chromedp.CSS(`input[name="kb:price-list"]`)),
			chromedp.SetValue(field("/knowledge/mode", "select"), "auto"),
			do(`document.querySelector('[data-pointer="/knowledge/mode"] select').dispatchEvent(new Event('change', {bubbles: true}))`),
			typeIn("/knowledge/top_k", "input", "3"),
			typeIn("/knowledge/min_score", "input", "0.25"),
			typeIn("/knowledge/tags_from", "input", "plan"),
			chromedp.Click(chromedp.CSS(`.tabs [data-view="json"]`)),
			jsonViewShown,
		)...)
		text := eval[string](t, ctx, editorText)
		var config struct {
			Knowledge map[string]any `json:"knowledge"`
		}
		if err := json.Unmarshal([]byte(text), &config); err != nil {
			t.Fatalf("the JSON view holds no JSON: %v\n%s", err, text)
		}
		want := map[string]any{"bases": []any{"price-list"}, "mode": "auto", "top_k": 3.0, "min_score": 0.25, "tags_from": "plan"}
		got, _ := json.Marshal(config.Knowledge)
		wanted, _ := json.Marshal(want)
		if !bytes.Equal(got, wanted) {
			t.Errorf("the config's knowledge is %s; want %s", got, wanted)
		}
	})
}

// TestKnowledgeBaseSearchedByMeaningPicksATenantProvidersModel creates a
// base with an embedding model chosen from the tenant's providers: the
// model field appears only once a provider is picked, offers that
// provider's models, and the base is listed as searched by meaning.
func TestKnowledgeBaseSearchedByMeaningPicksATenantProvidersModel(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		if _, err := w.svc.Providers().Put(bg, op, "acme", "embedder", platform.ProviderSpec{Kind: "openai", BaseURL: "https://ai.acme.example/v1",
			Models: []string{"text-embedding-3-small", "text-embedding-3-large"}}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "open the new base form", append(w.signInWithKey(),
			do(`location.hash = '#/t/acme/knowledge'`),
			chromedp.WaitVisible(chromedp.CSS(`select[name="embedding_provider"]`)),
		)...)
		if visible := eval[bool](t, ctx, `document.querySelector('input[name="embedding_model"]').offsetParent !== null`); visible {
			t.Errorf("the model field shows before a provider is picked")
		}
		run(t, ctx, "create",
			chromedp.SendKeys(chromedp.CSS(`main input[name="name"]`), "Product Docs"),
			chromedp.SetValue(chromedp.CSS(`select[name="embedding_provider"]`), "embedder"),
			do(`document.querySelector('select[name="embedding_provider"]').dispatchEvent(new Event('change'))`),
			chromedp.WaitVisible(chromedp.CSS(`input[name="embedding_model"]`)),
		)
		if offered := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#kb-embedding-models option')).map(o => o.value)`); strings.Join(offered, " ") != "text-embedding-3-small text-embedding-3-large" {
			t.Errorf("the model field offers %q; want the provider's models", offered)
		}
		run(t, ctx, "create",
			chromedp.SendKeys(chromedp.CSS(`input[name="embedding_model"]`), "text-embedding-3-small"),
			chromedp.Click(chromedp.Search(`//button[text()="Create knowledge base"]`)),
			until(contains("document", "main h1", "Product Docs")),
			until(contains("document", "main .lead", "by words and meaning (embedder · text-embedding-3-small)")),
		)
		b, err := w.svc.Knowledge().GetBase(bg, op, "acme", "product-docs")
		if err != nil || b.EmbeddingProvider != "embedder" || b.EmbeddingModel != "text-embedding-3-small" {
			t.Fatalf("the base %+v (%v); want the embedder's text-embedding-3-small", b, err)
		}
	})
}

// startIndexer runs the knowledge indexer over the world's store, as
// every server does, woken when a source is queued. It may fetch pages
// of the local server at siteURL only: the outbound policy allows that
// loopback port, as an operator would allow an intranet.
func (w *world) startIndexer(t *testing.T, siteURL string) {
	t.Helper()
	u, err := url.Parse(siteURL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{port})
	if err != nil {
		t.Fatal(err)
	}
	worker := ingest.New(w.st, nil, ingest.Options{
		Wake:     w.svc.Knowledge().Queued(),
		Outbound: policy,
		Settled: func(ctx context.Context, src *store.KnowledgeSource) {
			if err := w.svc.Knowledge().SourceSettled(ctx, src); err != nil {
				t.Errorf("knowledge source event: %v", err)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { worker.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// pdfOf writes a one-page PDF whose text layer is lines, in Helvetica.
func pdfOf(lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, line := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", line)
	}
	content.WriteString("ET")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// press clicks the element css selects from the page's script. The
// source list above the forms grows as sources are read, so a click at
// an element's place on screen could land on whatever moved there.
func press(css string) chromedp.Action[chromedp.Void] {
	return do(fmt.Sprintf(`document.querySelector(%s).click()`, js(css)))
}
