package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// secondStep answers a password that needs a second factor: 202 with
// the challenge, no session yet.
func (s *server) secondStep(c *gin.Context, st *platform.SecondStep) {
	s.signIns.WithLabelValues("second_step").Inc()
	out := apiclient.LoginResponse{TwoFactor: "code", Challenge: st.Challenge, ExpiresAt: &st.ExpiresAt}
	if st.Enrol {
		out.TwoFactor = "enrol"
	}
	c.JSON(http.StatusAccepted, out)
}

// verifyTOTP: POST /v1/auth/totp/verify {challenge, code | recovery_code}
// finishes a password sign-in. Codes spend the person's sign-in attempts,
// like passwords do.
func (s *server) verifyTOTP(c *gin.Context) {
	var req apiclient.TOTPVerifyRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if !s.admitSignIn(c, s.platform.TwoFactor().ChallengeEmail(ctx, req.Challenge)) {
		return
	}
	sess, err := s.platform.TwoFactor().Verify(ctx, req.Challenge, req.Code, req.RecoveryCode, c.ClientIP())
	s.signedIn(c, sess, err)
}

// enroller is the caller of the enrolment routes: with a challenge, the
// person whose sign-in waits for enrolment (nil principal); without, the
// signed-in person.
func (s *server) enroller(c *gin.Context, challenge string) (*platform.Principal, bool) {
	if challenge != "" {
		return nil, true
	}
	return s.principalOf(c)
}

// startTOTP: POST /v1/auth/totp {challenge?} begins enrolment.
func (s *server) startTOTP(c *gin.Context) {
	var req apiclient.TOTPStartRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	p, ok := s.enroller(c, req.Challenge)
	if !ok {
		return
	}
	e, err := s.platform.TwoFactor().StartEnrolment(c.Request.Context(), p, req.Challenge)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, apiclient.TOTPEnrolment{Secret: e.Secret, URI: e.URI})
}

// confirmTOTP: POST /v1/auth/totp/confirm {code, challenge?} turns
// two-factor on; with a challenge it also signs the person in.
func (s *server) confirmTOTP(c *gin.Context) {
	var req apiclient.TOTPConfirmRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	p, ok := s.enroller(c, req.Challenge)
	if !ok {
		return
	}
	email := ""
	if p != nil {
		email = p.Email
	} else {
		email = s.platform.TwoFactor().ChallengeEmail(c.Request.Context(), req.Challenge)
	}
	if !s.admitSignIn(c, email) {
		return
	}
	done, err := s.platform.TwoFactor().Confirm(c.Request.Context(), p, req.Challenge, req.Code, c.ClientIP())
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.TOTPConfirmed{RecoveryCodes: done.RecoveryCodes}
	if done.Session != nil {
		me, ok := s.startedSession(c, *done.Session)
		if !ok {
			return
		}
		out.Me = &me
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, out)
}

// getTOTP: GET /v1/auth/totp.
func (s *server) getTOTP(c *gin.Context) {
	st, err := s.platform.TwoFactor().Status(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.TOTPStatus{Enabled: st.Enabled, EnabledAt: st.EnabledAt, RecoveryCodesLeft: st.RecoveryCodesLeft})
}

// disableTOTP: DELETE /v1/auth/totp {password | code}. The password is
// an attempt like a sign-in's.
func (s *server) disableTOTP(c *gin.Context) {
	var req apiclient.TOTPDisableRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	p := principal(c)
	if !s.admitSignIn(c, p.Email) {
		return
	}
	if err := s.platform.TwoFactor().Disable(c.Request.Context(), p, req.Password, req.Code); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
