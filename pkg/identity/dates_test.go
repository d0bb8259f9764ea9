package identity_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/pkg/identity"
)

// TestNumericDatesThatDoNotFitAreRefusedForWhatTheyAre: a date is seconds
// since 1970 as a JSON number, which a token may make any size. One too
// large for a time (nbf 1e20 wrapped round to the distant past and let
// the token through) is refused as malformed, and exp 0, which the JWT
// library reads as no exp at all, is refused as expired.
func TestNumericDatesThatDoNotFitAreRefusedForWhatTheyAre(t *testing.T) {
	now := time.Now()
	v := identity.NewVerifier(nil, func() time.Time { return now })
	settings := identity.Settings{Secret: []byte(secret), Audience: audience}
	exp := float64(now.Add(time.Hour).Unix())
	tests := []struct {
		name       string
		dates      jwt.MapClaims
		wantReason string
		wantSays   string
	}{
		{"nbf of 1e20 is refused", jwt.MapClaims{"exp": exp, "nbf": 1e20}, identity.ReasonMalformed, "nbf"},
		{"nbf of -1e20 is refused", jwt.MapClaims{"exp": exp, "nbf": -1e20}, identity.ReasonMalformed, "nbf"},
		{"iat of 1e20 is refused", jwt.MapClaims{"exp": exp, "iat": 1e20}, identity.ReasonMalformed, "iat"},
		{"exp of 1e20 is refused", jwt.MapClaims{"exp": 1e20}, identity.ReasonMalformed, "exp"},
		{"exp of 0 is expired", jwt.MapClaims{"exp": 0}, identity.ReasonExpired, "expired"},
		{"a negative exp is expired", jwt.MapClaims{"exp": -5}, identity.ReasonExpired, "expired"},
		{"dates in range still pass", jwt.MapClaims{"exp": exp, "nbf": float64(now.Unix() - 60), "iat": float64(now.Unix() - 60)}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := jwt.MapClaims{"sub": "user-1", "aud": audience}
			for k, d := range tt.dates {
				claims[k] = d
			}
			token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(context.Background(), settings, token)
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var refused *identity.Error
			if !errors.As(err, &refused) || refused.Reason != tt.wantReason || !strings.Contains(refused.Message, tt.wantSays) {
				t.Fatalf("err = %v; want reason %s saying %q", err, tt.wantReason, tt.wantSays)
			}
		})
	}
}
