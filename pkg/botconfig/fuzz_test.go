package botconfig

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("../../tenants/*/bots/*.json")
	seeds = append(seeds, "testdata/design-example.json")
	for _, path := range seeds {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		`{}`, `[]`, `null`, `{"basic_settings": {"name": "x"}} x`, `{"basic_settings": {"name": 1}}`,
		`{"basic_settings": {"name": "x"}, "tools": [{"name": "t", "description": "d", "endpoint": {"url": "https://a.example.com/<id>", "body": "<id>"}}]}`,
		`{"basic_settings": {"name": "x"}, "runtime": {"max_turns": 1e400}}`,
		"{\"basic_settings\": {\"name\": \"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Load(data)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Load error %T %v is not a non-empty Problems", err, err)
			}
			for i, p := range ps {
				if p.Message == "" || (p.Pointer != "" && !strings.HasPrefix(p.Pointer, "/")) {
					t.Fatalf("malformed problem %+v", p)
				}
				if i > 0 && pointerLess(p.Pointer, ps[i-1].Pointer) {
					t.Fatalf("problems not sorted: %v", ps)
				}
			}
			return
		}
		b, err := Compile(cfg)
		if err != nil {
			t.Fatalf("Load accepted a config Compile rejects: %v", err)
		}
		if b2, _ := Compile(cfg); b2.SystemPrompt != b.SystemPrompt || b2.Fingerprint != b.Fingerprint {
			t.Fatal("Compile is not deterministic")
		}
	})
}

// canonical writes t back in template syntax, escaping literal "<" and "{{".
func (t strTemplate) canonical() string {
	var b strings.Builder
	for _, s := range t {
		switch s.kind {
		case segLiteral:
			b.WriteString(strings.NewReplacer("<", "<<", "{{", "{{{{").Replace(s.text))
		default:
			b.WriteString(placeholderText(s))
		}
	}
	return b.String()
}

func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "plain", "<id>", "a<<b", "{{x}}", "{{ secrets.k }}", "{{{{", "{{{x}}}", "<a><b>{{c}}", "<", "{{", "}}>", "<<<a>>>", "{{{{{{x}}"} {
		f.Add(s)
	}
	for _, s := range []string{"{email}", `\{email}`, `{"a": {b}}`, "{{{x}", "{x}}}", `\\{x}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Endpoint templates also read the seed's {name}: never a panic,
		// every error inside the input.
		if _, err := parseEndpointTemplate(s); err != nil {
			var te *TemplateError
			if !errors.As(err, &te) || te.Offset < 0 || te.Offset >= len(s) {
				t.Fatalf("endpoint template error %v has no offset inside the input", err)
			}
		}
		tmpl, err := parseTemplate(s)
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) || te.Offset < 0 || te.Offset >= len(s) {
				t.Fatalf("error %v has no offset inside the input", err)
			}
			return
		}
		again, err := parseTemplate(tmpl.canonical())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", tmpl.canonical(), s, err)
		}
		if again.canonical() != tmpl.canonical() || again.sample() != tmpl.sample() {
			t.Fatalf("round trip changed %q: %#v vs %#v", s, tmpl, again)
		}
	})
}

const fuzzEndpoint = `{"url": "https://api.example.com/items/<id>/x?q=<q>", "method": "POST",
  "headers": {"X-Q": "q=<q>", "Authorization": "Bearer {{secrets.token}}"},
  "query_params": {"note": "<note>"},
  "body": {"id": "<id>", "q": "<q>", "note": "n: <note>", "seats": "<seats>", "d": "todo_autofill_by_system"}}`

func FuzzRender(f *testing.F) {
	f.Add(`{"id": "1", "q": "a", "seats": 3}`, "x")
	f.Add(`{"id": "../..", "q": "\r\nX: y"}`, "/")
	f.Add(`{"id": "a/b?c#d", "note": null, "seats": 1e99}`, "%2F")
	f.Add(`[]`, "")
	f.Add(`{"id": {"a": [1, 2]}, "q": true}`, "\x00")
	tmpl := mustTemplate(f, `{"type": "object", "properties": {"id": {}, "q": {}, "note": {}, "seats": {}}, "required": ["id"]}`,
		fuzzEndpoint, `"context_variables": [{"name": "d"}]`)
	const secret = "fuzz-secret-value"
	f.Fuzz(func(t *testing.T, args, id string) {
		for _, a := range []string{args, `{"id": ` + jsonQuote(id) + `, "q": ` + jsonQuote(id) + `}`} {
			req, err := tmpl.Render([]byte(a), Vars{"secrets.token": secret, "d": id})
			if err != nil {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error leaks the secret: %v", err)
				}
				continue
			}
			u, err := url.Parse(req.URL)
			if err != nil || u.Host != "api.example.com" || u.Scheme != "https" {
				t.Fatalf("rendered URL %q escaped its origin (%v)", req.URL, err)
			}
			if segs := strings.Split(u.EscapedPath(), "/"); len(segs) != 4 || segs[1] != "items" || segs[3] != "x" {
				t.Fatalf("rendered path %q has a changed shape", u.EscapedPath())
			}
			if !json.Valid(req.Body) {
				t.Fatalf("rendered body is not JSON: %q", req.Body)
			}
			for k, vs := range req.Header {
				for _, v := range vs {
					if strings.ContainsAny(v, "\r\n") {
						t.Fatalf("header %s has a line break", k)
					}
				}
			}
		}
	})
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
