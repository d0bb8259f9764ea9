package platform_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

func TestTOTPCodesAreRFC6238s(t *testing.T) {
	t.Parallel()
	// RFC 6238 appendix B, SHA-1, its 8-digit codes cut to 6.
	const secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" // "12345678901234567890"
	for _, tc := range []struct {
		unix int64
		want string
	}{{59, "287082"}, {1111111109, "081804"}, {1234567890, "005924"}, {20000000000, "353130"}} {
		if got, err := platform.TOTPCode(secret, time.Unix(tc.unix, 0)); err != nil || got != tc.want {
			t.Errorf("at %d: %q, %v; want %q", tc.unix, got, err, tc.want)
		}
	}
}

// twoFactorPerson is a tenant's owner who signs in with a password.
func twoFactorPerson(t *testing.T, e *env, slug string) (email, password string) {
	t.Helper()
	email, password = "ada@"+slug+".example", "correct horse battery"
	if _, _, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: slug, OwnerEmail: email, OwnerPassword: password}); err != nil {
		t.Fatal(err)
	}
	return email, password
}

// signedIn signs in with a password that needs no second step.
func (e *env) signedIn(t *testing.T, email, password string) (string, *platform.Principal) {
	t.Helper()
	in, err := e.svc.Auth().Login(ctx, email, password)
	if err != nil || in.SecondStep != nil {
		t.Fatalf("login: %+v, %v; want a session", in.SecondStep, err)
	}
	return in.Token, e.authenticate(t, in.Token)
}

// secondStep signs in with a password that needs a second step.
func (e *env) secondStep(t *testing.T, email, password string) *platform.SecondStep {
	t.Helper()
	in, err := e.svc.Auth().Login(ctx, email, password)
	if err != nil || in.SecondStep == nil || in.Token != "" {
		t.Fatalf("login: %+v, %v; want a second step and no session", in, err)
	}
	return in.SecondStep
}

func (e *env) code(t *testing.T, secret string) string {
	t.Helper()
	c, err := platform.TOTPCode(secret, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) auditActions(t *testing.T, tenant string) []string {
	t.Helper()
	entries, _, err := e.svc.AuditLog().List(ctx, platform.Operator(), tenant, platform.AuditFilter{}, platform.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range entries {
		out = append(out, a.Action)
	}
	return out
}

func TestTwoFactorEnrolSignInAndRecovery(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		email, password := twoFactorPerson(t, e, "acme")
		token, p := e.signedIn(t, email, password)

		enrol, err := e.svc.TwoFactor().StartEnrolment(ctx, p, "")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(enrol.URI, "otpauth://totp/Parley:ada@acme.example?") || !strings.Contains(enrol.URI, "secret="+enrol.Secret) {
			t.Errorf("uri %q does not carry the label and secret", enrol.URI)
		}
		var recovery []string
		t.Run("enrolment turns on with a current code only, and hands out ten recovery codes", func(t *testing.T) {
			if st, _ := e.svc.TwoFactor().Status(ctx, p); st.Enabled {
				t.Fatal("on before confirming")
			}
			_, err := e.svc.TwoFactor().Confirm(ctx, p, "", "000000", "")
			wantInvalid(t, err, "/code")
			done, err := e.svc.TwoFactor().Confirm(ctx, p, "", e.code(t, enrol.Secret), "")
			if err != nil {
				t.Fatal(err)
			}
			if recovery = done.RecoveryCodes; len(recovery) != platform.RecoveryCodeCount {
				t.Fatalf("%d recovery codes", len(recovery))
			}
			st, _ := e.svc.TwoFactor().Status(ctx, p)
			if !st.Enabled || st.RecoveryCodesLeft != 10 {
				t.Errorf("status %+v", st)
			}
			if got := e.auditActions(t, "acme"); got[0] != platform.AuditTwoFactorEnabled {
				t.Errorf("audit %v", got)
			}
			if got := e.authenticate(t, token); got.SessionVia != store.SessionTwoFactor {
				t.Errorf("the enrolling session is via %q, want it marked two_factor", got.SessionVia)
			}
		})

		t.Run("the secret is sealed at rest", func(t *testing.T) {
			var row store.UserTOTP
			if err := e.store.DB().Where("user_id = ?", p.UserID).Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(row.Ciphertext, []byte(enrol.Secret)) || len(row.Ciphertext) < 20 {
				t.Error("the stored secret is not encrypted")
			}
		})

		t.Run("a password alone gives no session; the code of the confirmation is refused as replayed", func(t *testing.T) {
			st := e.secondStep(t, email, password)
			if st.Enrol {
				t.Fatal("asked to enrol again")
			}
			_, err := e.svc.TwoFactor().Verify(ctx, st.Challenge, e.code(t, enrol.Secret), "", "")
			if platform.ErrorCode(err) != platform.CodeUnauthorized || !strings.Contains(err.Error(), "used already") {
				t.Fatalf("replayed code: %v", err)
			}
			e.clock.Advance(30 * time.Second)
			code := e.code(t, enrol.Secret)
			sess, err := e.svc.TwoFactor().Verify(ctx, st.Challenge, code, "", "")
			if err != nil {
				t.Fatal(err)
			}
			if got := e.authenticate(t, sess.Token); got.SessionVia != store.SessionTwoFactor || len(got.Roles) != 1 {
				t.Errorf("session via %q", got.SessionVia)
			}
			_, err = e.svc.TwoFactor().Verify(ctx, st.Challenge, code, "", "")
			wantCode(t, err, platform.CodeUnauthorized)

			again := e.secondStep(t, email, password)
			_, err = e.svc.TwoFactor().Verify(ctx, again.Challenge, code, "", "")
			if err == nil || !strings.Contains(err.Error(), "used already") {
				t.Errorf("the same code on another sign-in: %v", err)
			}
			_, err = e.svc.TwoFactor().Verify(ctx, again.Challenge, "123456", "", "")
			wantCode(t, err, platform.CodeUnauthorized)
		})

		t.Run("a recovery code works once, in any case and without its dash", func(t *testing.T) {
			st := e.secondStep(t, email, password)
			typed := strings.ToUpper(strings.ReplaceAll(recovery[3], "-", ""))
			if _, err := e.svc.TwoFactor().Verify(ctx, st.Challenge, "", typed, "198.51.100.7"); err != nil {
				t.Fatal(err)
			}
			st = e.secondStep(t, email, password)
			_, err := e.svc.TwoFactor().Verify(ctx, st.Challenge, "", recovery[3], "")
			wantCode(t, err, platform.CodeUnauthorized)
			if got := e.auditActions(t, "acme"); got[0] != platform.AuditTwoFactorRecoveryUsed {
				t.Errorf("audit %v", got)
			}
			if s, _ := e.svc.TwoFactor().Status(ctx, p); s.RecoveryCodesLeft != 9 {
				t.Errorf("%d recovery codes left, want 9", s.RecoveryCodesLeft)
			}
		})

		t.Run("a challenge expires", func(t *testing.T) {
			st := e.secondStep(t, email, password)
			e.clock.Advance(platform.ChallengeTTL + time.Second)
			_, err := e.svc.TwoFactor().Verify(ctx, st.Challenge, e.code(t, enrol.Secret), "", "")
			wantCode(t, err, platform.CodeUnauthorized)
		})

		t.Run("turning it off needs the password or a code", func(t *testing.T) {
			e.clock.Advance(30 * time.Second)
			wantInvalid(t, e.svc.TwoFactor().Disable(ctx, p, "wrong", ""), "/password")
			wantInvalid(t, e.svc.TwoFactor().Disable(ctx, p, "", "000000"), "/code")
			if err := e.svc.TwoFactor().Disable(ctx, p, "", e.code(t, enrol.Secret)); err != nil {
				t.Fatal(err)
			}
			if got := e.auditActions(t, "acme"); got[0] != platform.AuditTwoFactorDisabled {
				t.Errorf("audit %v", got)
			}
			e.signedIn(t, email, password)
		})
	})
}

func TestTenantRequiresTwoFactor(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		email, password := twoFactorPerson(t, e, "acme")
		oldToken, before := e.signedIn(t, email, password)
		on := true

		t.Run("a password session without a second factor may not require it", func(t *testing.T) {
			_, err := e.svc.Tenants().Update(ctx, before, "acme", platform.UpdateTenantInput{RequireTwoFactor: &on})
			wantInvalid(t, err, "/require_two_factor")
		})
		tn, err := e.svc.Tenants().Update(ctx, platform.Operator(), "acme", platform.UpdateTenantInput{RequireTwoFactor: &on})
		if err != nil || !tn.RequireTwoFactor {
			t.Fatalf("require: %+v, %v", tn, err)
		}

		t.Run("a session begun with a password alone no longer acts in the tenant", func(t *testing.T) {
			if p := e.authenticate(t, oldToken); len(p.Roles) != 0 {
				t.Errorf("roles %v", p.Roles)
			}
		})

		t.Run("a member without two-factor enrols before the session", func(t *testing.T) {
			st := e.secondStep(t, email, password)
			if !st.Enrol {
				t.Fatal("not asked to enrol")
			}
			_, err := e.svc.TwoFactor().Verify(ctx, st.Challenge, "123456", "", "")
			wantCode(t, err, platform.CodeConflict)
			enrol, err := e.svc.TwoFactor().StartEnrolment(ctx, nil, st.Challenge)
			if err != nil {
				t.Fatal(err)
			}
			done, err := e.svc.TwoFactor().Confirm(ctx, nil, st.Challenge, e.code(t, enrol.Secret), "")
			if err != nil || done.Session == nil {
				t.Fatalf("confirm: %+v, %v", done, err)
			}
			p := e.authenticate(t, done.Session.Token)
			if p.Roles[tn.ID] != "owner" {
				t.Errorf("roles %v, want owner of acme", p.Roles)
			}
			t.Run("and cannot turn it off while the tenant requires it", func(t *testing.T) {
				err := e.svc.TwoFactor().Disable(ctx, p, password, "")
				if platform.ErrorCode(err) != platform.CodeConflict || !strings.Contains(err.Error(), "acme requires") {
					t.Errorf("disable: %v", err)
				}
			})
		})
	})
}
