package api

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// oidcStateCookie binds a single sign-on to the browser that started it:
// the callback must bring the same state in the URL and in this cookie,
// so nobody can finish their own sign-in in someone else's browser.
// SameSite=Lax, not Strict: the provider's redirect back is a cross-site
// top-level navigation, which Lax cookies still ride.
const oidcStateCookie = "parley_oidc_state"

const oidcCallbackPath = "/v1/auth/oidc/callback"

// oidcLogin: GET /v1/auth/oidc/login?tenant= sends the browser to the
// tenant's identity provider (the operator's without a tenant).
func (s *server) oidcLogin(c *gin.Context) {
	if !s.admitSignIn(c, "") {
		return
	}
	start, err := s.platform.SingleSignOn().StartOIDCLogin(c.Request.Context(), c.Query("tenant"), publicURL(c, oidcCallbackPath))
	if err != nil {
		s.signIns.WithLabelValues("refused").Inc()
		s.ssoFailed(c, err)
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: oidcStateCookie, Value: start.State, Path: "/v1/auth/oidc/",
		MaxAge: int(platform.OIDCLoginTTL.Seconds()), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	c.Redirect(http.StatusFound, start.URL)
}

// oidcCallback: GET /v1/auth/oidc/callback?state=&code= finishes a single
// sign-on: the session cookie, and on to the admin UI. A refusal is a page
// saying why, with the way back to the sign-in page.
func (s *server) oidcCallback(c *gin.Context) {
	gone := &http.Cookie{Name: oidcStateCookie, Path: "/v1/auth/oidc/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}
	http.SetCookie(c.Writer, gone)
	if e := c.Query("error"); e != "" {
		s.signIns.WithLabelValues("refused").Inc()
		s.ssoFailed(c, platform.Errorf(platform.CodeUnauthorized, "the identity provider did not sign you in: %s %s", e, c.Query("error_description")))
		return
	}
	if !s.admitSignIn(c, "") {
		return
	}
	browserState := ""
	if ck, err := c.Request.Cookie(oidcStateCookie); err == nil {
		browserState = ck.Value
	}
	sess, err := s.platform.SingleSignOn().FinishOIDCLogin(c.Request.Context(), platform.OIDCCallback{State: c.Query("state"), Code: c.Query("code"),
		BrowserState: browserState, RedirectURL: publicURL(c, oidcCallbackPath), IP: c.ClientIP()})
	if err != nil {
		s.signIns.WithLabelValues("refused").Inc()
		s.ssoFailed(c, err)
		return
	}
	s.signIns.WithLabelValues("ok").Inc()
	http.SetCookie(c.Writer, sessionCookieFor(sess.Token, sess.ExpiresAt))
	c.Redirect(http.StatusFound, "/admin/")
}

var ssoErrorPage = template.Must(template.New("sso").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Parley</title>
<link rel="stylesheet" href="/admin/admin.css"></head>
<body><main class="signin"><h1>Sign-in failed</h1>
<p id="sso-error" role="alert">{{.}}</p>
<p><a href="/admin/">Back to the sign-in page</a></p></main></body></html>
`))

// ssoFailed answers a failed single sign-on: a browser gets a page with
// the error's status and message (never internal detail: fail's rules),
// any other client the JSON error.
func (s *server) ssoFailed(c *gin.Context, err error) {
	if !strings.Contains(c.GetHeader("Accept"), "text/html") {
		s.fail(c, err)
		return
	}
	ae := s.toAPIError(err)
	if ae == errInternal {
		s.log.Error("request failed", "request_id", c.GetString(ctxRequestID), "route", routeLabel(c), "err", err)
	}
	status, ok := statusOf[ae.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Status(status)
	_ = ssoErrorPage.Execute(c.Writer, ae.Message)
	c.Abort()
}

// putSSO: PUT /v1/tenants/{tenant}/sso -> the settings, never the secret.
func (s *server) putSSO(c *gin.Context) {
	var req apiclient.PutSSORequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.platform.SingleSignOn().PutSSO(c.Request.Context(), principal(c), c.Param("tenant"), platform.SSOInput{
		Issuer: req.Issuer, ClientID: req.ClientID, ClientSecret: req.ClientSecret, DefaultRole: req.DefaultRole,
		AllowedDomains: req.AllowedDomains, RequireSSO: req.RequireSSO})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// getSSO: GET /v1/tenants/{tenant}/sso.
func (s *server) getSSO(c *gin.Context) {
	out, err := s.platform.SingleSignOn().GetSSO(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// deleteSSO: DELETE /v1/tenants/{tenant}/sso.
func (s *server) deleteSSO(c *gin.Context) {
	if err := s.platform.SingleSignOn().DeleteSSO(c.Request.Context(), principal(c), c.Param("tenant")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
