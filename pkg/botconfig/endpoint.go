package botconfig

import (
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// Endpoint defaults and limits.
const (
	DefaultEndpointTimeout = 30 * time.Second
	MaxEndpointTimeout     = 120 * time.Second
)

// EndpointTemplate is a parsed endpoint whose placeholders were all checked
// at compile time. It is immutable and safe for concurrent Render calls.
type EndpointTemplate struct {
	method  string
	origin  string      // scheme://host[:port], never templated
	path    strTemplate // literal parts kept as written, values path-escaped
	query   []queryParam
	headers []headerParam
	body    *bodyNode // nil: no body
	timeout time.Duration
	vars    map[string]ContextVariable // declared context variables, for defaults
	// chatbotID fills {{chatbot_id}} when the dialog's vars do not: the
	// config already knows it.
	chatbotID string
}

// queryParam is one query parameter. Keys are stored escaped.
type queryParam struct {
	key   string
	value strTemplate
	// fromMap: the value came from query_params, whose literal text is
	// plain and must be escaped; URL-embedded literals are kept as written.
	fromMap bool
	// bare: written as "?flag" with no "=", rendered the same way.
	bare bool
}

// headerParam is one request header with a templated value.
type headerParam struct {
	name  string
	value strTemplate
}

// Method is the HTTP method the endpoint uses.
func (t *EndpointTemplate) Method() string { return t.method }

// Origin is the endpoint's scheme, host and port: fixed by the config, so safe
// to log and to use as a metrics label.
func (t *EndpointTemplate) Origin() string { return t.origin }

// Timeout is the endpoint's per-call timeout with the default applied.
func (t *EndpointTemplate) Timeout() time.Duration { return t.timeout }

// scope is what the placeholders of one tool's endpoint may refer to.
type scope struct {
	args      map[string]bool            // declared parameters; true when required
	vars      map[string]ContextVariable // declared context variables
	chatbotID string                     // basic_settings.chatbot_id
}

// headersSetByPlatform cannot be set by a config: the HTTP client owns them and
// letting authors set them enables request smuggling.
var headersSetByPlatform = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Upgrade": true, "Te": true, "Trailer": true, "Keep-Alive": true, "Proxy-Connection": true,
}

var allowedMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// parseEndpoint checks an endpoint and parses it into a template, reporting
// problems under at (the endpoint's pointer). The template is nil when there
// are problems.
func parseEndpoint(ep *Endpoint, sc scope, at string) (*EndpointTemplate, Problems) {
	var ps Problems
	t := &EndpointTemplate{vars: sc.vars, chatbotID: sc.chatbotID, timeout: DefaultEndpointTimeout}
	t.parseURL(ep.URL, sc, ptr(at, "url"), &ps)
	t.parseQueryParams(ep.QueryParams, sc, ptr(at, "query_params"), &ps)
	t.parseHeaders(ep.Headers, sc, ptr(at, "headers"), &ps)
	if len(ep.Body) > 0 && string(ep.Body) != "null" {
		t.body = parseBody(ep.Body, sc, ptr(at, "body"), &ps)
	}
	t.method = endpointMethod(ep, t.body != nil, at, &ps)
	switch {
	case !validTimeout(ep.Timeout):
		ps.add(ptr(at, "timeout"), "timeout must be more than 0 and at most %d seconds", int(MaxEndpointTimeout/time.Second))
	case ep.Timeout > 0:
		t.timeout = time.Duration(ep.Timeout * float64(time.Second))
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return t, nil
}

// validTimeout accepts 0 (the default) up to MaxEndpointTimeout seconds. It
// compares floats: converting a huge value to a Duration first would overflow.
func validTimeout(seconds float64) bool {
	return seconds >= 0 && seconds <= MaxEndpointTimeout.Seconds()
}

// endpointMethod applies the default method (POST with a body, GET without)
// and rejects the rest.
func endpointMethod(ep *Endpoint, hasBody bool, at string, ps *Problems) string {
	m := ep.Method
	if m == "" {
		if hasBody {
			return http.MethodPost
		}
		return http.MethodGet
	}
	switch {
	case !slices.Contains(allowedMethods, m):
		ps.add(ptr(at, "method"), "method %q is not supported; use GET, POST, PUT, PATCH or DELETE (upper case)", m)
	case m == http.MethodGet && hasBody:
		ps.add(ptr(at, "body"), "a GET request cannot have a body; use method POST, or move the values to query_params")
	}
	return m
}

// parseURL splits the URL into a fixed origin, a path template and query
// parameters. Placeholders may not touch the origin: the config author, not
// the model or a variable, decides which host a tool talks to.
func (t *EndpointTemplate) parseURL(raw string, sc scope, at string, ps *Problems) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		ps.add(at, "URL %q must be absolute, like https://api.example.com/path", raw)
		return
	}
	hostEnd := strings.IndexAny(rest, "/?#")
	if hostEnd < 0 {
		hostEnd = len(rest)
	}
	origin := scheme + "://" + rest[:hostEnd]
	if strings.ContainsAny(origin, "<{") {
		ps.add(at, "placeholders are not allowed in the URL's scheme, host or port; put them in the path or query")
		return
	}
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		ps.add(at, "URL is not valid: %v", err)
		return
	case u.Scheme != "http" && u.Scheme != "https":
		ps.add(at, "URL scheme %q is not allowed; use https (or http)", u.Scheme)
		return
	case u.User != nil:
		ps.add(at, "URL must not contain credentials; send them in a header with {{secrets.NAME}}")
		return
	case u.Hostname() == "":
		ps.add(at, "URL has no host")
		return
	case !validPort(u.Port()):
		ps.add(at, "URL port %q is not a port; use a number from 1 to 65535, or none for the scheme's", u.Port())
		return
	}
	t.origin = origin
	rest = rest[hostEnd:]
	if strings.Contains(rest, "#") {
		ps.add(at, "URL must not have a #fragment; servers never receive it")
		return
	}
	path, query, _ := strings.Cut(rest, "?")
	pt, err := parseEndpointTemplate(path)
	if err != nil {
		ps.add(at, "URL path: %v", err)
		return
	}
	if _, err := url.Parse(origin + pt.sample()); err != nil {
		ps.add(at, "URL path is not valid: %v", err)
		return
	}
	checkRefs(pt, sc, at, ps, refPath)
	t.path = pt
	t.parseURLQuery(query, sc, at, ps)
}

// parseURLQuery parses "a=<x>&b=lit" from the URL itself.
func (t *EndpointTemplate) parseURLQuery(query string, sc scope, at string, ps *Problems) {
	if query == "" {
		return
	}
	for _, pair := range strings.Split(query, "&") {
		key, value, hasEq := strings.Cut(pair, "=")
		if strings.Contains(key, "<") || strings.Contains(key, "{{") {
			ps.add(at, "query parameter names cannot hold placeholders; only values can")
			continue
		}
		vt, ok := parseValue(key, value, sc, at, ps, refQuery)
		if ok {
			t.query = append(t.query, queryParam{key: key, value: vt, bare: !hasEq})
		}
	}
}

// parseQueryParams adds query_params in key order, so renders are deterministic.
func (t *EndpointTemplate) parseQueryParams(params map[string]string, sc scope, at string, ps *Problems) {
	for _, key := range sortedKeys(params) {
		vt, ok := parseValue(key, params[key], sc, ptr(at, key), ps, refQuery)
		if ok {
			t.query = append(t.query, queryParam{key: url.QueryEscape(key), value: vt, fromMap: true})
		}
	}
}

// parseHeaders checks header names and parses their values.
func (t *EndpointTemplate) parseHeaders(headers map[string]string, sc scope, at string, ps *Problems) {
	seen := map[string]string{}
	for _, name := range sortedKeys(headers) {
		p := ptr(at, name)
		canon := textproto.CanonicalMIMEHeaderKey(name)
		switch {
		case !isToken(name):
			ps.add(p, "%q is not a valid header name; use letters, digits and '-'", name)
			continue
		case headersSetByPlatform[canon]:
			ps.add(p, "header %q is set by the platform; remove it", name)
			continue
		case seen[canon] != "":
			ps.add(p, "header %q repeats %q (header names ignore case); keep one", name, seen[canon])
			continue
		case strings.ContainsAny(headers[name], "\r\n\x00"):
			ps.add(p, "header value must not contain line breaks or NUL")
			continue
		}
		seen[canon] = name
		if headers[name] == AutofillSentinel {
			ps.add(p, "%q only works in body and query values; use {{variable}} in headers", AutofillSentinel)
			continue
		}
		vt, err := parseEndpointTemplate(headers[name])
		if err != nil {
			ps.add(p, "%v", err)
			continue
		}
		checkRefs(vt, sc, p, ps, refHeader)
		t.headers = append(t.headers, headerParam{name: canon, value: vt})
	}
}

// sample renders t with a harmless stand-in for every placeholder, to check
// the literal text around them.
func (t strTemplate) sample() string {
	var b strings.Builder
	for _, s := range t {
		if s.kind == segLiteral {
			b.WriteString(s.text)
		} else {
			b.WriteString("x")
		}
	}
	return b.String()
}

// isToken reports whether s is an HTTP token (RFC 9110), as header names must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isIdentChar(c) && !strings.ContainsRune("!#$%&'*+-.^`|~", rune(c)) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
