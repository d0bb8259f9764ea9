package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Bounds of an acceptable token.
const (
	// MaxLifetime is the longest a token may live: from iat to exp, and
	// from now to exp. A tenant's backend signs a fresh token per page
	// view or session refresh, so a leaked one is soon useless.
	MaxLifetime = 24 * time.Hour
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway = 30 * time.Second
	// MaxTokenSize caps a token before it is parsed.
	MaxTokenSize = 8 << 10
	// MaxSubjectLength caps the user id a token carries.
	MaxSubjectLength = 200
)

// Settings are how one tenant's tokens are verified: Secret (HS256) or
// JWKSURL (RS256, ES256), and the audience tokens must name if set.
type Settings struct {
	Secret   []byte
	JWKSURL  string
	Audience string
}

// Configured reports whether s can verify anything.
func (s Settings) Configured() bool { return len(s.Secret) > 0 || s.JWKSURL != "" }

// User is a verified end user: the token's sub and all of its claims.
type User struct {
	ID     string
	Claims map[string]any
}

// Reasons a token is refused, in Error.Reason.
const (
	ReasonNotConfigured = "not_configured"
	ReasonMalformed     = "malformed"
	ReasonAlgorithm     = "algorithm"
	ReasonSignature     = "signature"
	ReasonUnknownKey    = "unknown_key"
	ReasonKeys          = "keys_unavailable"
	ReasonExpired       = "expired"
	ReasonNotYetValid   = "not_yet_valid"
	ReasonLifetime      = "lifetime"
	ReasonAudience      = "audience"
	ReasonSubject       = "subject"
)

// Error is a refused token: a stable Reason and a message for the caller
// that never contains the token.
type Error struct {
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

func refuse(reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Verifier verifies tokens; one per process, safe for concurrent use. It
// keeps the JWKS key sets it has fetched.
type Verifier struct {
	now  func() time.Time
	jwks *jwksCache
}

// NewVerifier returns a verifier fetching JWKS URLs with client (it must
// be the outbound client: the URL is the tenant's) and reading the time
// from now.
func NewVerifier(client *http.Client, now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{now: now, jwks: newJWKSCache(client, now)}
}

// Verify checks token against s and returns its user, or an *Error saying
// why it is refused.
func (v *Verifier) Verify(ctx context.Context, s Settings, token string) (User, error) {
	if !s.Configured() {
		return User{}, refuse(ReasonNotConfigured, "this tenant does not accept signed user tokens; configure PUT /v1/tenants/{tenant}/identity first")
	}
	if len(token) > MaxTokenSize {
		return User{}, refuse(ReasonMalformed, "the user token is longer than %d bytes", MaxTokenSize)
	}
	methods, key := []string{"HS256"}, func(*jwt.Token) (any, error) { return s.Secret, nil }
	if len(s.Secret) == 0 {
		methods, key = []string{"RS256", "ES256"}, v.jwksKey(ctx, s.JWKSURL)
	}
	// The algorithm is checked before any key is chosen, so a token cannot
	// pick HS256 to have a public key used as its secret, or "none".
	keyfunc := func(t *jwt.Token) (any, error) {
		if !slices.Contains(methods, t.Method.Alg()) {
			return nil, refuse(ReasonAlgorithm, "the user token is signed with %q; this tenant's identity settings accept only %s",
				t.Method.Alg(), strings.Join(methods, ", "))
		}
		return key(t)
	}
	opts := []jwt.ParserOption{jwt.WithExpirationRequired(),
		jwt.WithLeeway(Leeway), jwt.WithTimeFunc(v.now), jwt.WithIssuedAt()}
	if s.Audience != "" {
		opts = append(opts, jwt.WithAudience(s.Audience))
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, keyfunc, opts...)
	if err == nil || errors.Is(err, jwt.ErrTokenInvalidClaims) {
		// Signed by the tenant: its dates are read before the library's
		// verdict on them, which a date out of range misleads.
		if refused := checkDates(claims); refused != nil {
			return User{}, refused
		}
	}
	if err != nil {
		return User{}, reasonOf(err, claims, methods, s.Audience)
	}
	if err := v.checkLifetime(claims); err != nil {
		return User{}, err
	}
	sub, _ := claims["sub"].(string)
	switch {
	case sub == "":
		return User{}, refuse(ReasonSubject, "the user token has no sub claim; put the user's id in sub")
	case len([]rune(sub)) > MaxSubjectLength:
		return User{}, refuse(ReasonSubject, "the user token's sub must have at most %d characters", MaxSubjectLength)
	case strings.IndexByte(sub, 0) >= 0:
		// It becomes the dialog's user_id: PostgreSQL refuses NUL in text.
		return User{}, refuse(ReasonSubject, "the user token's sub must not contain the NUL character")
	}
	return User{ID: sub, Claims: claims}, nil
}

// maxDate is the last second of year 9999, the largest date a token's
// exp, nbf or iat may name.
const maxDate = 253402300799

// checkDates refuses a token whose exp, nbf or iat is a number of seconds
// that is no time: beyond ±maxDate, where converting it to an integer
// wraps (nbf 1e20 became a date long past and let the token in). An exp
// of 0 or less is expired; the library takes exp 0 for no exp at all.
func checkDates(c jwt.MapClaims) *Error {
	for _, name := range []string{"exp", "nbf", "iat"} {
		var secs float64
		switch v := c[name].(type) {
		case float64:
			secs = v
		case json.Number:
			secs, _ = v.Float64()
		default:
			continue // absent, or not a number: the library refuses that
		}
		if math.IsNaN(secs) || math.Abs(secs) > maxDate {
			return refuse(ReasonMalformed, "the user token's %s is not a date: it must be seconds since 1970, before the year 10000", name)
		}
		if name == "exp" && secs <= 0 {
			return refuse(ReasonExpired, "the user token has expired; ask the site for a fresh one")
		}
	}
	return nil
}

// checkLifetime refuses a token that lives longer than MaxLifetime, from
// its iat or from now.
func (v *Verifier) checkLifetime(c jwt.MapClaims) error {
	exp, _ := c.GetExpirationTime()
	if exp == nil {
		return refuse(ReasonExpired, "the user token has no exp claim; tokens must expire")
	}
	if exp.Sub(v.now()) > MaxLifetime+Leeway {
		return refuse(ReasonLifetime, "the user token expires more than %s from now; sign short-lived tokens", MaxLifetime)
	}
	if iat, _ := c.GetIssuedAt(); iat != nil && exp.Sub(iat.Time) > MaxLifetime {
		return refuse(ReasonLifetime, "the user token lives longer than %s (exp - iat); sign short-lived tokens", MaxLifetime)
	}
	return nil
}

// reasonOf turns the library's error into a refusal.
func reasonOf(err error, claims jwt.MapClaims, methods []string, audience string) error {
	var refused *Error
	switch {
	case errors.As(err, &refused):
		return refused
	case errors.Is(err, jwt.ErrTokenMalformed):
		return refuse(ReasonMalformed, "the user token is not a well-formed JWT")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrInvalidKeyType):
		return refuse(ReasonSignature, "the user token's signature does not verify with this tenant's identity key")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return refuse(ReasonAlgorithm, "the user token's algorithm is not supported; this tenant's identity settings accept only %s", strings.Join(methods, ", "))
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && claims["exp"] == nil:
		return refuse(ReasonExpired, "the user token has no exp claim; tokens must expire")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return refuse(ReasonAudience, "the user token has no aud claim; this tenant requires %q", audience)
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse(ReasonExpired, "the user token has expired; ask the site for a fresh one")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return refuse(ReasonNotYetValid, "the user token is not valid yet (nbf or iat in the future)")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return refuse(ReasonAudience, "the user token's aud must include %q", audience)
	}
	return refuse(ReasonMalformed, "the user token's claims are not valid")
}
