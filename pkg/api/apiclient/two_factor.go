package apiclient

import (
	"context"
	"net/http"
	"time"
)

// LoginResponse is the answer to POST /v1/auth/login: who signed in (200),
// or, with 202, the second step a password sign-in still needs.
type LoginResponse struct {
	Me
	// TwoFactor is "code" (send a code to /v1/auth/totp/verify) or "enrol"
	// (a tenant requires two-factor: enrol with the challenge first).
	TwoFactor string     `json:"two_factor,omitempty"`
	Challenge string     `json:"challenge,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// TOTPStatus is GET /v1/auth/totp: whether two-factor is on.
type TOTPStatus struct {
	Enabled           bool       `json:"enabled"`
	EnabledAt         *time.Time `json:"enabled_at,omitempty"`
	RecoveryCodesLeft int64      `json:"recovery_codes_left"`
}

// TOTPStartRequest is the body of POST /v1/auth/totp; Challenge is the
// sign-in's when a tenant requires enrolment before a session.
type TOTPStartRequest struct {
	Challenge string `json:"challenge,omitempty"`
}

// TOTPEnrolment is a new secret for an authenticator app: typed in, or
// opened as an otpauth:// link.
type TOTPEnrolment struct {
	Secret string `json:"secret"`
	URI    string `json:"uri"`
}

// TOTPConfirmRequest is the body of POST /v1/auth/totp/confirm.
type TOTPConfirmRequest struct {
	Code      string `json:"code"`
	Challenge string `json:"challenge,omitempty"`
}

// TOTPConfirmed is two-factor turned on: recovery codes shown this once,
// and, when enrolment finished a sign-in, who signed in.
type TOTPConfirmed struct {
	RecoveryCodes []string `json:"recovery_codes"`
	Me            *Me      `json:"me,omitempty"`
}

// TOTPVerifyRequest is the body of POST /v1/auth/totp/verify: the
// challenge of the sign-in and a code, or a recovery code.
type TOTPVerifyRequest struct {
	Challenge    string `json:"challenge"`
	Code         string `json:"code,omitempty"`
	RecoveryCode string `json:"recovery_code,omitempty"`
}

// TOTPDisableRequest is the body of DELETE /v1/auth/totp: the password,
// or a current code.
type TOTPDisableRequest struct {
	Password string `json:"password,omitempty"`
	Code     string `json:"code,omitempty"`
}

// TOTP says whether two-factor is on for the signed-in person.
func (c *Client) TOTP(ctx context.Context) (*TOTPStatus, error) {
	var out TOTPStatus
	return &out, c.Do(ctx, http.MethodGet, "/v1/auth/totp", nil, &out)
}

// StartTOTP begins enrolment; challenge is "" for a signed-in person.
func (c *Client) StartTOTP(ctx context.Context, challenge string) (*TOTPEnrolment, error) {
	var out TOTPEnrolment
	return &out, c.Do(ctx, http.MethodPost, "/v1/auth/totp", TOTPStartRequest{Challenge: challenge}, &out)
}

// ConfirmTOTP turns two-factor on with a current code.
func (c *Client) ConfirmTOTP(ctx context.Context, challenge, code string) (*TOTPConfirmed, error) {
	var out TOTPConfirmed
	return &out, c.Do(ctx, http.MethodPost, "/v1/auth/totp/confirm", TOTPConfirmRequest{Challenge: challenge, Code: code}, &out)
}

// VerifyTOTP finishes a sign-in with a code or a recovery code.
func (c *Client) VerifyTOTP(ctx context.Context, req TOTPVerifyRequest) (*Me, error) {
	var out Me
	return &out, c.Do(ctx, http.MethodPost, "/v1/auth/totp/verify", req, &out)
}

// DisableTOTP turns two-factor off.
func (c *Client) DisableTOTP(ctx context.Context, req TOTPDisableRequest) error {
	return c.Do(ctx, http.MethodDelete, "/v1/auth/totp", req, nil)
}
