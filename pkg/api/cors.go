package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/auth"
)

// CORS for the chat widget. A widget runs on a tenant's site, another
// origin than ours, and calls the chat routes with a pk_ key. Which origins
// may use a key is decided by authenticate (Principal.AllowsOrigin) on the
// real request; CORS only lets the browser send that request and read its
// answer. No response here ever allows credentials: the widget sends a
// bearer key, never our session cookie.

const (
	corsAllowMethods = "GET, POST"
	corsAllowHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, X-Request-ID, X-Parley-User-Token, Last-Event-ID"
	// Retry-After tells the widget when to retry a 429; X-Request-ID lets
	// a site owner quote a failing request. Content-Type, which tells an
	// event stream from JSON, is readable without being listed.
	corsExposeHeaders = "Retry-After, X-Request-ID"
	corsMaxAge        = "600"
)

// cors answers preflights of the chat routes and marks their answers to a
// pk_ key readable by the calling origin. Other routes get no CORS headers,
// so browsers keep other sites from reading them.
func cors() gin.HandlerFunc {
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" || !isChatPath(c.Request.URL.Path) {
			c.Next()
			return
		}
		h := c.Writer.Header()
		if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
			// A preflight carries no Authorization header, so it cannot
			// be checked against a key: answer it for any origin and let
			// the real request's origin check decide.
			h.Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
		h.Add("Vary", "Origin")
		if presentsPublishableKey(c.Request) {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		c.Next()
	}
}

// presentsPublishableKey reports whether the request's bearer token is a
// pk_ key. Only those are meant for pages on other origins; a server key,
// session or platform token used from a browser page stays unreadable
// there. A forged "pk_" token still fails authentication, and reading
// that 401 tells a page nothing.
func presentsPublishableKey(r *http.Request) bool {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		auth.KeyKind(strings.TrimSpace(token)) == auth.KindPublishable
}

// isChatPath reports whether path is one of the routes the widget uses:
// starting a dialog, reading it, posting messages, tool results and
// confirmations to it, stopping its reply, following it live, saying the
// visitor types or has read it, and rating it when it ends.
//
//	/v1/tenants/{t}/bots/{b}/dialogs
//	/v1/tenants/{t}/dialogs/{d}
//	/v1/tenants/{t}/dialogs/{d}/{messages|tool-results|confirmations|cancel|events|typing|read|rating}
//	/v1/tenants/{t}/dialogs/{d}/messages/{m}/feedback
func isChatPath(path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) < 4 || parts[0] != "v1" || parts[1] != "tenants" || parts[2] == "" {
		return false
	}
	rest := parts[3:]
	switch {
	case len(rest) == 3 && rest[0] == "bots" && rest[1] != "" && rest[2] == "dialogs":
		return true
	case len(rest) == 2 && rest[0] == "dialogs" && rest[1] != "":
		return true
	case len(rest) == 3 && rest[0] == "dialogs" && rest[1] != "":
		switch rest[2] {
		case "messages", "tool-results", "confirmations", "cancel", "events", "typing", "read", "rating":
			return true
		}
	case len(rest) == 5 && rest[0] == "dialogs" && rest[1] != "" && rest[2] == "messages" && rest[3] != "" && rest[4] == "feedback":
		return true
	}
	return false
}
