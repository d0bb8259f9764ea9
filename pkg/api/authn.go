package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// sessionCookie holds an admin UI session token.
const sessionCookie = "parley_session"

// ctxPrincipal is the gin context key of the authenticated caller.
const ctxPrincipal = "parley.principal"

var errNoCredentials = &apiclient.Error{Code: apiclient.CodeUnauthorized,
	Message: "authentication required: send Authorization: Bearer <key> or sign in"}

var errCSRF = &apiclient.Error{Code: apiclient.CodeForbidden,
	Message: "a request authenticated by the session cookie must send the " + apiclient.HeaderCSRF + " header or a same-origin Origin header"}

var errOrigin = &apiclient.Error{Code: apiclient.CodeForbidden,
	Message: "this key may not be used from this origin"}

// authenticate resolves the caller to a platform Principal, or stops with
// 401. A bearer credential wins over the session cookie. Handlers behind it
// read the caller with principal(c).
func (s *server) authenticate(c *gin.Context) {
	p, ok := s.principalOf(c)
	if !ok {
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

// principalOf authenticates the request's credential, or answers the
// error and reports false.
func (s *server) principalOf(c *gin.Context) (*platform.Principal, bool) {
	token, fromCookie, err := credential(c.Request)
	if err != nil {
		writeError(c, err)
		return nil, false
	}
	// The browser attaches cookies to cross-site requests too; only a
	// request a page of ours made can carry the custom header or our origin.
	if fromCookie && !safeMethod(c.Request.Method) && !sameOriginOrMarked(c.Request) {
		writeError(c, errCSRF)
		return nil, false
	}
	p, aerr := s.platform.Auth().Authenticate(c.Request.Context(), token)
	if aerr != nil {
		s.fail(c, aerr)
		return nil, false
	}
	if origin := browserOrigin(c.Request); origin != "" && !p.AllowsOrigin(origin) {
		writeError(c, errOrigin)
		return nil, false
	}
	p.IP = c.ClientIP()
	if p.KeyKind == auth.KindPublishable {
		p.UserToken = c.GetHeader(UserTokenHeader)
	}
	return p, true
}

// errServerKey refuses a caller of the OpenAI and MCP faces that is not a
// tenant's server key: the key is what names the tenant there.
var errServerKey = &apiclient.Error{Code: apiclient.CodeUnauthorized,
	Message: "send Authorization: Bearer <key> with a tenant's server key (sk_) that has the chat scope"}

// serverKey resolves the bearer credential of the OpenAI and MCP faces to
// the tenant's sk_ key it must be. Those faces take no session cookie (no
// CSRF exposure) and no publishable key (a widget's key is for its page).
func (s *server) serverKey(c *gin.Context) (*platform.Principal, error) {
	token, fromCookie, err := credential(c.Request)
	if err != nil {
		return nil, err
	}
	if fromCookie {
		return nil, errServerKey
	}
	p, perr := s.platform.Auth().Authenticate(c.Request.Context(), token)
	if perr != nil {
		return nil, perr
	}
	if p.Kind != platform.KindKey || p.KeyKind != auth.KindSecret {
		return nil, errServerKey
	}
	return p, nil
}

// credential extracts the bearer token or the session cookie.
func credential(r *http.Request) (token string, fromCookie bool, err *apiclient.Error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		tok = strings.TrimSpace(tok)
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return "", false, &apiclient.Error{Code: apiclient.CodeUnauthorized, Message: "the Authorization header must be \"Bearer <key>\""}
		}
		return tok, false, nil
	}
	if ck, cerr := r.Cookie(sessionCookie); cerr == nil && ck.Value != "" {
		return ck.Value, true, nil
	}
	return "", false, errNoCredentials
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOriginOrMarked reports whether a cookie-authenticated unsafe request
// is safe from CSRF: it carries our custom header, or its Origin is this
// very host.
func sameOriginOrMarked(r *http.Request) bool {
	if r.Header.Get(apiclient.HeaderCSRF) != "" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return false
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// browserOrigin is the web origin a browser request comes from, "" when
// it names none, for a pk_ key's origin binding. Browsers send Origin on
// every cross-origin request, but on a same-origin one only when it is
// not a GET or HEAD: the widget on one of this server's own pages
// (/widget-demo.html) reads its dialog back after a reload with none. Such
// a request says Sec-Fetch-Site: same-origin, a header no page can set,
// and its Referer is the page, which must be on this very host; that page's
// origin is the request's.
//
// Nothing here is proof against a client that is not a browser: curl can
// send any Origin, Sec-Fetch-Site or Referer it likes, and a pk_ key is
// public. The binding only keeps pages of other sites from using the key
// in their visitors' browsers, and the browser always gives such a
// request away, with their Origin or with Sec-Fetch-Site: cross-site.
func browserOrigin(r *http.Request) string {
	if origin := r.Header.Get("Origin"); origin != "" {
		return origin
	}
	if r.Header.Get("Sec-Fetch-Site") != "same-origin" {
		return ""
	}
	ref, err := url.Parse(r.Referer())
	if err != nil || (ref.Scheme != "http" && ref.Scheme != "https") || ref.Host == "" || !strings.EqualFold(ref.Host, r.Host) {
		return ""
	}
	return ref.Scheme + "://" + ref.Host
}

// principalOf returns the caller, when authenticate ran.
func principalOf(c *gin.Context) (*platform.Principal, bool) {
	v, ok := c.Get(ctxPrincipal)
	if !ok {
		return nil, false
	}
	p, ok := v.(*platform.Principal)
	return p, ok
}

// principal returns the caller of a route behind authenticate.
func principal(c *gin.Context) *platform.Principal {
	p, _ := principalOf(c)
	return p
}
