package webtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// hostile is Markdown a model might be tricked into writing: HTML that
// runs script when parsed, script links, HTML inside code, and nested
// emphasis. Each payload that ran would push its name to window.pwned.
const hostile = `<img src=x onerror="window.pwned.push('img')"> <script>window.pwned.push('script')</script>
<svg onload="window.pwned.push('svg')"></svg> <b onmouseover="window.pwned.push('b')">bold tag</b>

[click me](javascript:window.pwned.push('link')) [data](data:text/html,<script>window.pwned.push('x')</script>) [relative](/admin/) [cased](JaVaScRiPt:window.pwned.push('x')) <javascript:window.pwned.push('x')>

***strong *and* _nested_ emphasis***

` + "`<img src=y onerror=\"window.pwned.push('code')\">`" + `

` + "```html\n<script>window.pwned.push('fence')</script><iframe src=\"javascript:window.pwned.push('x')\"></iframe>\n```"

// normal is a reply as a model writes it: a heading, a paragraph with a
// link and inline code, a list and a code block.
const normal = "## Your order\n\nTrack it at [our shop](https://shop.acme.example/orders/A1) or run `track A1`.\n\n- Tent\n- Sleeping bag\n  - down, 800 fill\n\n```sh\ncurl https://shop.acme.example/orders/A1\n```"

// element is an element the renderer made, as the page reports it.
type element struct {
	Tag   string            `json:"tag"`
	Attrs map[string]string `json:"attrs"`
	Text  string            `json:"text"`
}

// elements is an expression listing the elements under the node expr.
func elements(expr string) string {
	return fmt.Sprintf(`Array.from((%s).querySelectorAll('*')).map(e => ({
  tag: e.tagName.toLowerCase(),
  attrs: Object.fromEntries(Array.from(e.attributes).map(a => [a.name, a.value])),
  text: e.textContent}))`, expr)
}

// allowedTags are the elements the renderer draws; allowedAttrs the only
// attributes it sets.
var (
	allowedTags  = "p br strong em del code pre a ul ol li h1 h2 h3 h4 h5 h6 blockquote hr"
	allowedAttrs = map[string]bool{"href": true, "target": true, "rel": true, "class": true, "start": true}
)

// checkInert fails unless every element is one the renderer draws, with
// only its attributes, and every link is http(s) or mailto in a new tab
// without an opener.
func checkInert(t *testing.T, els []element) {
	t.Helper()
	for _, e := range els {
		if !strings.Contains(" "+allowedTags+" ", " "+e.Tag+" ") {
			t.Errorf("the model's HTML made a <%s> %v", e.Tag, e.Attrs)
		}
		for k, v := range e.Attrs {
			if !allowedAttrs[k] {
				t.Errorf("<%s> carries attribute %s=%q from the model", e.Tag, k, v)
			}
		}
		if e.Tag == "a" {
			href := e.Attrs["href"]
			if !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "mailto:") {
				t.Errorf("a link goes to %q", href)
			}
			if e.Attrs["target"] != "_blank" || e.Attrs["rel"] != "noopener noreferrer" {
				t.Errorf("link %q has target %q rel %q; want _blank, noopener noreferrer", href, e.Attrs["target"], e.Attrs["rel"])
			}
		}
	}
}

// has reports whether els holds an element of tag whose text contains text.
func has(els []element, tag, text string) bool {
	for _, e := range els {
		if e.Tag == tag && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// TestMarkdownRendererKeepsModelHTMLInert renders hostile Markdown with the
// shared renderer on a customer's page that has no Content-Security-Policy
// to hide behind: nothing runs, no element of the model's HTML exists, and
// the HTML shows as text. A control image inserted as HTML proves the page
// would have run an onerror handler in the same time.
func TestMarkdownRendererKeepsModelHTMLInert(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		run(t, ctx, "render hostile Markdown",
			chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
			until(`window.Parley && window.Parley.markdown !== undefined`),
			do(`(() => {
  window.pwned = [];
  const box = document.createElement('div');
  box.id = 'md';
  document.body.append(box);
  Parley.markdown.renderInto(box, `+js(hostile)+`);
  const control = document.createElement('div');
  control.innerHTML = '<img src=x onerror="window.controlRan = true">';
  document.body.append(control);
})()`),
			until(`window.controlRan === true`),
		)
		if ran := eval[[]string](t, ctx, `window.pwned`); len(ran) != 0 {
			t.Errorf("the model's payloads ran: %v", ran)
		}
		els := eval[[]element](t, ctx, elements(`document.getElementById('md')`))
		checkInert(t, els)
		text := eval[string](t, ctx, `document.getElementById('md').textContent`)
		for _, want := range []string{`<img src=x onerror=`, `<script>window.pwned.push('script')</script>`, "click me", "<javascript:window.pwned.push('x')>"} {
			if !strings.Contains(text, want) {
				t.Errorf("the rendered text lacks %q (the model's HTML shows as text): %q", want, text)
			}
		}
		if !has(els, "code", `<img src=y onerror=`) || !has(els, "pre", `<iframe src="javascript:window.pwned.push('x')">`) {
			t.Errorf("HTML in inline code and in a fence is not shown as code: %+v", els)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#md strong > em > em').length`); n != 2 {
			t.Errorf("***strong *and* nested*** drew %d strong>em>em; want 2 (and, nested): %+v", n, els)
		}
		for _, e := range els {
			if e.Tag == "a" {
				t.Errorf("a refused address became a link: %v", e.Attrs)
			}
		}
	})
}

// TestWidgetRendersAMarkdownReply sends Markdown the fake model echoes
// back in fragments of three characters: the widget re-renders the reply
// as it streams and ends with a heading, a link that opens in a new tab,
// a nested list and a code block; a hostile reply stays inert.
func TestWidgetRendersAMarkdownReply(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		lastBot := `Array.from(` + shadow + `.querySelectorAll('.msg.bot')).pop()`
		run(t, ctx, "send Markdown",
			chromedp.Navigate(site.URL+"/?key="+w.widgetKey(t, site.URL)),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			send("Sure.\n\n"+normal),
			until(contains(shadow, ".msg.bot pre code", "curl https://shop.acme.example/orders/A1")),
			until(`!`+shadow+`.querySelector('form .btn').disabled`),
		)
		els := eval[[]element](t, ctx, elements(lastBot))
		checkInert(t, els)
		for _, want := range []struct{ tag, text string }{
			{"h2", "Your order"}, {"a", "our shop"}, {"code", "track A1"}, {"ul", "Sleeping bag"},
			{"li", "down, 800 fill"}, {"pre", "curl https://shop.acme.example/orders/A1"},
		} {
			if !has(els, want.tag, want.text) {
				t.Errorf("the reply has no <%s> with %q: %+v", want.tag, want.text, els)
			}
		}
		if n := eval[int](t, ctx, lastBot+`.querySelectorAll('ul ul li').length`); n != 1 {
			t.Errorf("the nested list item is drawn %d times inside a nested list; want 1", n)
		}
		if href := eval[string](t, ctx, lastBot+`.querySelector('a').href`); href != "https://shop.acme.example/orders/A1" {
			t.Errorf("the link goes to %q", href)
		}
		screenshot(t, ctx, "widget-markdown")

		run(t, ctx, "send hostile Markdown",
			do(`window.pwned = []`),
			send(hostile),
			until(contains(shadow, ".msg.bot pre", "window.pwned.push('fence')")),
			until(`!`+shadow+`.querySelector('form .btn').disabled`),
		)
		checkInert(t, eval[[]element](t, ctx, elements(lastBot)))
		if ran := eval[[]string](t, ctx, `window.pwned`); len(ran) != 0 {
			t.Errorf("the model's payloads ran in the widget: %v", ran)
		}
		if n := eval[int](t, ctx, shadow+`.querySelectorAll('img, script, svg:not(.launcher svg), iframe, b').length`); n != 0 {
			t.Errorf("%d elements of the model's HTML are in the widget", n)
		}
		if got := eval[string](t, ctx, `Array.from(`+shadow+`.querySelectorAll('.msg.user')).pop().textContent`); got != strings.TrimSpace(hostile) {
			t.Errorf("the visitor's own message is not shown as typed: %q", got)
		}
	})
}
