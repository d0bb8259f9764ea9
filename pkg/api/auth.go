package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// login: POST /v1/auth/login {email, password}. The session token goes
// only into an HttpOnly cookie, so page scripts (and XSS) never see it;
// SameSite=Strict keeps other sites' requests from carrying it.
func (s *server) login(c *gin.Context) {
	var req apiclient.LoginRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if !s.admitSignIn(c, req.Email) {
		return
	}
	in, err := s.platform.Auth().Login(c.Request.Context(), req.Email, req.Password)
	if err == nil && in.SecondStep != nil {
		s.secondStep(c, in.SecondStep)
		return
	}
	s.signedIn(c, in.Session, err)
}

// acceptInvite: POST /v1/auth/accept-invite {token, password}. The invited
// user sets a password and is signed in, as by login.
func (s *server) acceptInvite(c *gin.Context) {
	var req apiclient.AcceptInviteRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if !s.admitSignIn(c, "") {
		return
	}
	sess, err := s.platform.Members().AcceptInvite(c.Request.Context(), req.Token, req.Password, c.ClientIP())
	s.signedIn(c, sess, err)
}

// admitSignIn spends a sign-in attempt of the email (when given) and of
// the client's address, or answers 429 with Retry-After.
func (s *server) admitSignIn(c *gin.Context, email string) bool {
	wait, ok := s.logins.allow(email, c.ClientIP())
	if ok {
		return true
	}
	s.signIns.WithLabelValues("rate_limited").Inc()
	c.Header("Retry-After", strconv.Itoa(retryAfter(wait)))
	writeError(c, &apiclient.Error{Code: apiclient.CodeRateLimited,
		Message: fmt.Sprintf("too many sign-in attempts; try again in %d seconds", retryAfter(wait))})
	return false
}

// signedIn answers a sign-in: the session cookie and who the user is.
func (s *server) signedIn(c *gin.Context, sess platform.Session, err error) {
	if err != nil {
		s.signIns.WithLabelValues("refused").Inc()
		s.fail(c, err)
		return
	}
	if me, ok := s.startedSession(c, sess); ok {
		c.JSON(http.StatusOK, me)
	}
}

// startedSession counts a sign-in, sets the session cookie and says who
// signed in; on failure it has answered.
func (s *server) startedSession(c *gin.Context, sess platform.Session) (apiclient.Me, bool) {
	s.signIns.WithLabelValues("ok").Inc()
	ctx := c.Request.Context()
	p, err := s.platform.Auth().Authenticate(ctx, sess.Token)
	if err != nil {
		s.fail(c, err)
		return apiclient.Me{}, false
	}
	me, err := s.platform.Auth().Me(ctx, p)
	if err != nil {
		s.fail(c, err)
		return apiclient.Me{}, false
	}
	http.SetCookie(c.Writer, sessionCookieFor(sess.Token, sess.ExpiresAt))
	c.Set(ctxPrincipal, p)
	return meOut(me), true
}

// logout: POST /v1/auth/logout. It needs no valid session (logging out
// twice is fine) and always clears the cookie.
func (s *server) logout(c *gin.Context) {
	token, fromCookie, _ := credential(c.Request)
	if fromCookie && !sameOriginOrMarked(c.Request) {
		writeError(c, errCSRF)
		return
	}
	if strings.HasPrefix(token, auth.SessionPrefix) {
		// A browser that reloads mid-request cancels its context; the
		// session must end anyway, or signing out leaves the user signed in.
		if err := s.platform.Auth().Logout(context.WithoutCancel(c.Request.Context()), token); err != nil {
			s.fail(c, err)
			return
		}
	}
	gone := sessionCookieFor("", time.Time{})
	gone.MaxAge = -1
	http.SetCookie(c.Writer, gone)
	c.Status(http.StatusNoContent)
}

// sessionCookieFor is the session cookie. Secure holds on plain-http
// localhost too: browsers treat localhost as a secure context.
func sessionCookieFor(token string, expires time.Time) *http.Cookie {
	return &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode,
	}
}

// me: GET /v1/auth/me.
func (s *server) me(c *gin.Context) {
	me, err := s.platform.Auth().Me(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, meOut(me))
}

func meOut(me platform.Me) apiclient.Me {
	out := apiclient.Me{Kind: string(me.Kind), Memberships: me.Memberships}
	if me.User != nil {
		out.User = &apiclient.User{ID: me.User.ID, Email: me.User.Email}
	}
	if me.Key != nil {
		k := keyOut(*me.Key)
		out.Key = &k
	}
	return out
}
