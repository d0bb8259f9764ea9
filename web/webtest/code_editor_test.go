package webtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestTheJSONViewHighlightsAndCompletesFromTheSchema types into the JSON
// view as a person would: the text is highlighted, Ctrl-Space at an empty
// place lists the fields the schema the server serves has there, a field
// name being typed is completed as it is typed, with its description, and
// an enum field offers its values as its value is typed.
func TestTheJSONViewHighlightsAndCompletesFromTheSchema(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.OpenSQLite(t))
	ctx := tab(t, browser(t))
	const start = "{\n  \"basic_settings\": {\"name\": \"Acme\", \n  },\n  \"mcp_servers\": [{\"name\": \"docs\", \"url\": \"https://mcp.example.com\", \"transport\": }]\n}"
	run(t, ctx, "open the JSON view",
		w.signInAs(w.adminKey, "acme"),
		until(contains("document", "main table a", "Acme Support")),
		chromedp.Click(chromedp.CSS(`main table a`)),
		chromedp.WaitVisible(chromedp.CSS(`.tabs [data-view="json"]`)),
		chromedp.Click(chromedp.CSS(`.tabs [data-view="json"]`)),
		jsonViewShown,
		setEditor(start),
		until(fmt.Sprintf(`%s.then(t => t.startsWith('{\n  "basic_settings"'))`, editorText)),
	)

	screenshot(t, ctx, "admin-json-editor")
	t.Run("the JSON is highlighted", func(t *testing.T) {
		styled := eval[bool](t, ctx, fmt.Sprintf(`Array.from(%[1]s.querySelectorAll('.cm-content span')).some(s => s.textContent === '"Acme"' && getComputedStyle(s).color !== getComputedStyle(%[1]s.querySelector('.cm-content')).color)`, codeEditor))
		if !styled {
			t.Error("the property name is drawn like plain text")
		}
	})

	t.Run("Ctrl-Space lists the fields, and a field name being typed is completed with its description", func(t *testing.T) {
		at := strings.Index(start, `"Acme", `) + len(`"Acme", `)
		run(t, ctx, "ask at an empty place",
			do(fmt.Sprintf(`%s.then(v => { v.dispatch({selection: {anchor: %d}}); v.focus(); })`, editorView, at)),
			ctrlSpace,
			until(contains(codeEditor, ".cm-tooltip-autocomplete li", `"greeting"`)),
			chromedp.KeyEvent(kb.Escape),
			until(codeEditor+`.querySelector('.cm-tooltip-autocomplete') === null`),
		)
		// No Ctrl-Space: the list opens as the key is typed.
		run(t, ctx, "type a key",
			chromedp.KeyEvent(`"gre`),
			until(contains(codeEditor, ".cm-tooltip-autocomplete li", `"greeting"`)),
			until(contains(codeEditor, ".cm-completionInfo", "The first message a chat widget shows")),
		)
		if offered := eval[string](t, ctx, textOf(codeEditor, ".cm-tooltip-autocomplete li")); strings.Contains(offered, `"name"`) {
			t.Errorf("the completion offers a key the object already has: %s", offered)
		}
		run(t, ctx, "pick it",
			pickCompletion(`"greeting"`),
			until(fmt.Sprintf(`%s.then(t => t.includes('"greeting": '))`, editorText)),
			chromedp.KeyEvent(`"Hello`),
		)
		// The text is read, not awaited: a wrong text is reported as it is.
		if text := eval[string](t, ctx, editorText); !strings.Contains(text, `"name": "Acme", "greeting": "Hello"`) {
			t.Errorf("after completing the key and typing the value the text is %q", text)
		}
	})

	t.Run("an enum field offers its values", func(t *testing.T) {
		run(t, ctx, "complete a value",
			do(fmt.Sprintf(`%s.then(v => { v.dispatch({selection: {anchor: v.state.doc.toString().indexOf('"transport": ') + %d}}); v.focus(); })`, editorView, len(`"transport": `))),
			chromedp.KeyEvent(`"s`),
			until(contains(codeEditor, ".cm-tooltip-autocomplete li", `"sse"`)),
			until(contains(codeEditor, ".cm-tooltip-autocomplete li", `"stdio"`)),
			pickCompletion(`"sse"`),
			until(fmt.Sprintf(`%s.then(t => t.includes('"transport": "sse"'))`, editorText)),
		)
		text := eval[string](t, ctx, editorText)
		var config struct {
			MCPServers []struct{ Transport string } `json:"mcp_servers"`
		}
		if err := json.Unmarshal([]byte(text), &config); err != nil || len(config.MCPServers) != 1 || config.MCPServers[0].Transport == "" {
			t.Errorf("after completing the value the text is %q (%v)", text, err)
		}
	})
}

// TestCompletionKnowsWhereTheCursorIs checks jsoncomplete.js's placeAt,
// which reads the path at the cursor from text that is rarely valid JSON
// while it is typed.
func TestCompletionKnowsWhereTheCursorIs(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.OpenSQLite(t))
	ctx := tab(t, browser(t))
	run(t, ctx, "load", chromedp.Navigate(w.api.URL+"/admin/"), chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)))
	cases := []struct {
		name, before string
		want         string
	}{
		{"a key at the top", `{"`, `{"path":[],"want":"key","from":1,"keys":[]}`},
		{"a key after others, which are not offered again", `{"llm": {"model": "x", "te`, `{"path":["llm"],"want":"key","from":23,"keys":["model"]}`},
		{"a value of a member", `{"llm": {"tool_choice": `, `{"path":["llm","tool_choice"],"want":"value","from":24,"keys":[]}`},
		{"a bare word value", `{"runtime": {"require_done_tool": tr`, `{"path":["runtime","require_done_tool"],"want":"value","from":34,"keys":[]}`},
		{"inside the second element of an array", `{"tools": [{"name": "a"}, {"endpoint": {"me`, `{"path":["tools",1,"endpoint"],"want":"key","from":40,"keys":[]}`},
		{"an element of an array of strings", `{"native_tools": ["current_time", "h`, `{"path":["native_tools",1],"want":"value","from":34,"keys":[]}`},
		{"escaped quotes and braces in strings do not confuse it", `{"basic_settings": {"name": "a \"}{\" b", "gr`, `{"path":["basic_settings"],"want":"key","from":42,"keys":["name"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := eval[string](t, ctx, fmt.Sprintf(`import('/admin/js/jsoncomplete.js').then(m => { const p = m.placeAt(%s, %d); return JSON.stringify({...p, keys: [...p.keys]}); })`, js(tc.before), len(tc.before)))
			if got != tc.want {
				t.Errorf("placeAt(%q) = %s; want %s", tc.before, got, tc.want)
			}
		})
	}
}

// ctrlSpace asks for completions, as a person does in CodeMirror.
var ctrlSpace = chromedp.KeyEvent(" ", chromedp.KeyModifiers(chromedp.ModifierCtrl))

// pickCompletion clicks the completion option labelled label (the list is
// in the editor's shadow root, out of reach of CSS selectors).
func pickCompletion(label string) chromedp.Action[chromedp.Void] {
	return do(fmt.Sprintf(`Array.from(%s.querySelectorAll('.cm-tooltip-autocomplete li')).find(li => li.textContent.startsWith(%s))
  .dispatchEvent(new MouseEvent('mousedown', {bubbles: true, button: 0}))`, codeEditor, js(label)))
}
