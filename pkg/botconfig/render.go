package botconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/parleyhq/parley/pkg/redact"
	"net/http"
	"net/url"
	"strings"
)

// Render fills the template with one call's arguments (a JSON object,
// already validated against the tool's schema) and the dialog's vars.
//
// Errors name the argument, variable or header at fault but never contain a
// secret value, so they are safe to show the model and to log.
func (t *EndpointTemplate) Render(args json.RawMessage, vars Vars) (*RenderedRequest, error) {
	a, err := decodeArgs(args)
	if err != nil {
		return nil, err
	}
	r := &renderer{t: t, args: a, vars: vars}
	u, err := r.url()
	if err != nil {
		return nil, fmt.Errorf("render URL: %w", err)
	}
	header, err := r.header()
	if err != nil {
		return nil, err
	}
	var body []byte
	if t.body != nil {
		var buf bytes.Buffer
		if err := t.body.render(&buf, r); err != nil {
			return nil, fmt.Errorf("render body: %w", err)
		}
		body = buf.Bytes()
		if header.Get("Content-Type") == "" {
			header.Set("Content-Type", "application/json")
		}
	}
	return &RenderedRequest{
		Method: t.method, URL: u, Header: header, Body: body,
		Timeout: t.timeout, secrets: r.secrets,
	}, nil
}

// Redact replaces every secret value used in r with "[redacted]" in s, for
// error texts and logs, in every form a server may echo it (escaped,
// encoded: see pkg/redact).
func (r *RenderedRequest) Redact(s string) string {
	if r == nil {
		return s
	}
	return redact.New(r.secrets...).Redact(s)
}

// decodeArgs splits the arguments object into raw values. UseNumber keeps
// numbers' exact text (no float64 rounding of large ids).
func decodeArgs(args json.RawMessage) (map[string]json.RawMessage, error) {
	a := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(args)) == 0 {
		return a, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	if a == nil { // the arguments were JSON null
		a = map[string]json.RawMessage{}
	}
	return a, nil
}

// renderer holds one Render call's inputs and collects the secrets it used.
type renderer struct {
	t       *EndpointTemplate
	args    map[string]json.RawMessage
	vars    Vars
	secrets []string
}

// value is a placeholder's value for one call.
type value struct {
	present bool
	raw     json.RawMessage // arguments: the JSON value, compact
	text    string          // the value as text: strings unquoted, the rest as JSON
}

// value looks up one placeholder. An optional argument the model left out (or
// sent as null) and a context variable with no value and no default are
// absent, not errors; a missing secret or required variable is an error.
func (r *renderer) value(s segment) (value, error) {
	switch s.kind {
	case segArg:
		return argValue(r.args[s.text])
	case segVar:
		if name, ok := strings.CutPrefix(s.text, SecretPrefix); ok {
			v, ok := r.vars[s.text]
			if !ok {
				return value{}, fmt.Errorf("secret %q is not set for this tenant; add it to the tenant's secrets", name)
			}
			if v != "" {
				r.secrets = append(r.secrets, v)
			}
			return value{present: true, text: v}, nil
		}
		v := r.vars[s.text]
		cv := r.t.vars[s.text]
		if v == "" {
			v = cv.Default
		}
		if v == "" && s.text == "chatbot_id" {
			v = r.t.chatbotID
		}
		if v == "" {
			if cv.Required {
				return value{}, fmt.Errorf("context variable %q is required but has no value in this dialog", s.text)
			}
			return value{}, nil
		}
		return value{present: true, text: v}, nil
	}
	return value{present: true, text: s.text}, nil
}

func argValue(raw json.RawMessage) (value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return value{}, nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return value{}, errors.New("arguments are not valid JSON")
	}
	v := value{present: true, raw: compact.Bytes(), text: compact.String()}
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &v.text); err != nil {
			return value{}, errors.New("arguments are not valid JSON")
		}
	}
	return v, nil
}

// text renders a template as a string, passing placeholder values through
// escape (nil: as is). Absent values render empty.
func (r *renderer) text(t strTemplate, escape func(string) string) (string, error) {
	var b strings.Builder
	for _, s := range t {
		if s.kind == segLiteral {
			b.WriteString(s.text)
			continue
		}
		v, err := r.value(s)
		if err != nil {
			return "", err
		}
		if escape != nil {
			v.text = escape(v.text)
		}
		b.WriteString(v.text)
	}
	return b.String(), nil
}

// url renders origin, path and query.
func (r *renderer) url() (string, error) {
	var p strings.Builder
	for _, s := range r.t.path {
		if s.kind == segLiteral {
			p.WriteString(s.text)
			continue
		}
		v, err := r.value(s)
		if err != nil {
			return "", err
		}
		if err := checkPathValue(s, v); err != nil {
			return "", err
		}
		// PathEscape also escapes "/", so a value stays inside its segment
		// for a server that routes on the raw path.
		p.WriteString(url.PathEscape(v.text))
	}
	// Each value is free of dot segments, but values and literals side by
	// side could still spell one ("<a>.." with a = "x/").
	if dotSegments(p.String()) > dotSegments(r.t.path.sample()) {
		return "", errors.New("the values in the URL path would make a \".\" or \"..\" segment, leaving the endpoint's path")
	}
	var b strings.Builder
	b.WriteString(r.t.origin)
	b.WriteString(p.String())
	sep := "?"
	for _, q := range r.t.query {
		part, keep, err := r.queryPart(q)
		if err != nil {
			return "", err
		}
		if keep {
			b.WriteString(sep)
			b.WriteString(part)
			sep = "&"
		}
	}
	return b.String(), nil
}

// checkPathValue rejects path values that would change which resource the
// request addresses: nothing, or a dot segment a server would resolve.
// The value is escaped, so a server that routes on the raw path sees one
// segment; but most servers decode the path first (turning %2F back into
// "/"), and some decode twice, and then "../admin" or "%2e%2e%2fadmin"
// climbs out of the endpoint's path. No order id or file name needs a
// dot segment, so any the value holds is refused.
func checkPathValue(s segment, v value) error {
	name := placeholderText(s)
	switch {
	case !v.present || v.text == "":
		return fmt.Errorf("%s has no value but the URL path needs one", name)
	case v.text == "." || v.text == "..":
		return fmt.Errorf("%s cannot be %q in the URL path", name, v.text)
	case dotSegments(v.text) > 0:
		return fmt.Errorf("%s cannot hold a \".\" or \"..\" path segment (plain or percent-encoded) in the URL path", name)
	}
	return nil
}

// maxPathDecodes is how many times dotSegments decodes a path: once for
// the server, more for the proxies and frameworks in front of one that
// decode again.
const maxPathDecodes = 3

// dotSegments counts the "." and ".." segments of p as it reads after each
// of up to maxPathDecodes percent-decodings (and as written), taking "\"
// as a separator too, as some servers do.
func dotSegments(p string) int {
	n := 0
	for i := 0; ; i++ {
		for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			if seg == "." || seg == ".." {
				n++
			}
		}
		decoded, err := url.PathUnescape(p)
		if i == maxPathDecodes || err != nil || decoded == p {
			return n
		}
		p = decoded
	}
}

// queryPart renders one query parameter; keep is false when the parameter is
// one absent placeholder and so is left out.
func (r *renderer) queryPart(q queryParam) (part string, keep bool, err error) {
	if seg, ok := q.value.single(); ok {
		v, err := r.value(seg)
		if err != nil {
			return "", false, err
		}
		if !v.present {
			return "", false, nil
		}
	}
	if q.fromMap {
		s, err := r.text(q.value, nil)
		return q.key + "=" + url.QueryEscape(s), true, err
	}
	s, err := r.text(q.value, url.QueryEscape)
	if q.bare && s == "" {
		return q.key, true, err
	}
	return q.key + "=" + s, true, err
}

// header renders the headers. A header that is one absent placeholder is left
// out; a value with a line break is an error, since it could inject headers.
func (r *renderer) header() (http.Header, error) {
	h := http.Header{}
	for _, hp := range r.t.headers {
		if seg, ok := hp.value.single(); ok {
			v, err := r.value(seg)
			if err != nil {
				return nil, fmt.Errorf("render header %q: %w", hp.name, err)
			}
			if !v.present {
				continue
			}
		}
		s, err := r.text(hp.value, nil)
		if err != nil {
			return nil, fmt.Errorf("render header %q: %w", hp.name, err)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, fmt.Errorf("render header %q: a value contains a line break or NUL, which is not allowed in headers", hp.name)
		}
		h.Set(hp.name, s)
	}
	return h, nil
}

// placeholderText writes a placeholder as the author did, for messages.
func placeholderText(s segment) string {
	if s.kind == segArg {
		return "<" + s.text + ">"
	}
	return "{{" + s.text + "}}"
}
