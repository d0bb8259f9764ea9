package platform_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		_, first, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		forged, _ := auth.GenerateAPIKey(auth.KindSecret)
		cases := []struct {
			name  string
			token string
			kind  platform.PrincipalKind
			want  platform.Code
		}{
			{"the platform token is the operator", platformToken, platform.KindPlatform, ""},
			{"a tenant key is that key", first.Key, platform.KindKey, ""},
			{"a key with surrounding spaces still works", " " + first.Key + " ", platform.KindKey, ""},
			{"no token is unauthorized", "", "", platform.CodeUnauthorized},
			{"a near-miss platform token is unauthorized", platformToken + "x", "", platform.CodeUnauthorized},
			{"a well-formed key nobody issued is unauthorized", forged.Plaintext, "", platform.CodeUnauthorized},
			{"a truncated key is unauthorized", first.Key[:len(first.Key)-1], "", platform.CodeUnauthorized},
			{"an unknown session token is unauthorized", auth.SessionPrefix + "nope", "", platform.CodeUnauthorized},
			{"random text is unauthorized", "hello", "", platform.CodeUnauthorized},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p, err := e.svc.Auth().Authenticate(ctx, tc.token)
				wantCode(t, err, tc.want)
				if err == nil && p.Kind != tc.kind {
					t.Fatalf("kind %q, want %q", p.Kind, tc.kind)
				}
			})
		}
	})
}

func TestAuthenticateWithoutPlatformToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		svc := platformtest.New(t, e.store, platform.Options{Sealer: mustSealer(t)})
		_, err := svc.Auth().Authenticate(ctx, "")
		wantCode(t, err, platform.CodeUnauthorized)
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, _, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{
			Slug: "acme", OwnerEmail: "ada@acme.example", OwnerPassword: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		refused := []struct{ name, email, password string }{
			{"a wrong password is refused", "ada@acme.example", "wrong horse"},
			{"an unknown email is refused the same way", "bob@acme.example", "correct horse"},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				_, err := e.svc.Auth().Login(ctx, tc.email, tc.password)
				wantCode(t, err, platform.CodeUnauthorized)
				if err.Error() != "unauthorized: wrong email or password" {
					t.Fatalf("message %q tells the cases apart", err)
				}
			})
		}
		sess, err := e.svc.Auth().Login(ctx, "ada@acme.example", "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		t.Run("a session acts with the user's role in each tenant", func(t *testing.T) {
			p := e.authenticate(t, sess.Token)
			if p.Kind != platform.KindSession || p.Roles[tn.ID] != auth.RoleOwner || p.Email != "ada@acme.example" {
				t.Fatalf("principal %+v", p)
			}
			if _, err := e.svc.Tenants().Get(ctx, p, "acme"); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("logging out ends the session at once, and twice is fine", func(t *testing.T) {
			for range 2 {
				if err := e.svc.Auth().Logout(ctx, sess.Token); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.svc.Auth().Authenticate(ctx, sess.Token)
			wantCode(t, err, platform.CodeUnauthorized)
		})
		t.Run("a session expires after its lifetime", func(t *testing.T) {
			s2, err := e.svc.Auth().Login(ctx, "ada@acme.example", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(13 * time.Hour)
			_, err = e.svc.Auth().Authenticate(ctx, s2.Token)
			wantCode(t, err, platform.CodeUnauthorized)
		})
	})
}

func TestUsersAndMembers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		op := platform.Operator()
		tn, admin := e.tenantWithKey(t, "acme")
		if _, err := e.svc.Users().Create(ctx, op, "ada@acme.example", "correct horse"); err != nil {
			t.Fatal(err)
		}
		t.Run("an email in use is a conflict", func(t *testing.T) {
			_, err := e.svc.Users().Create(ctx, op, "ADA@acme.example", "correct horse")
			wantCode(t, err, platform.CodeConflict)
		})
		t.Run("a tenant key cannot create users", func(t *testing.T) {
			_, err := e.svc.Users().Create(ctx, admin, "bob@acme.example", "correct horse")
			wantCode(t, err, platform.CodeForbidden)
		})
		t.Run("a bad email and a short password are both reported", func(t *testing.T) {
			_, err := e.svc.Users().Create(ctx, op, "Ada <ada@x.example>", "short")
			wantInvalid(t, err, "/email", "/password")
		})
		t.Run("an unknown role is invalid, and the error names every role", func(t *testing.T) {
			_, err := e.svc.Members().Add(ctx, admin, tn.ID, "ada@acme.example", "root")
			wantInvalid(t, err, "/role")
			var pe *platform.Error
			if !errors.As(err, &pe) || pe.Details[0].Message != "must be one of owner, admin, editor, operator, viewer" {
				t.Fatalf("role error %v", err)
			}
		})
		t.Run("adding an unknown user is not found", func(t *testing.T) {
			_, err := e.svc.Members().Add(ctx, admin, tn.ID, "ghost@acme.example", auth.RoleViewer)
			wantCode(t, err, platform.CodeNotFound)
		})
		t.Run("an admin key cannot demote an owner", func(t *testing.T) {
			if _, err := e.svc.Members().Add(ctx, op, tn.ID, "ada@acme.example", auth.RoleOwner); err != nil {
				t.Fatal(err)
			}
			_, err := e.svc.Members().Add(ctx, admin, tn.ID, "ada@acme.example", auth.RoleViewer)
			wantCode(t, err, platform.CodeForbidden)
		})
		t.Run("members are listed with their roles", func(t *testing.T) {
			ms, err := e.svc.Members().List(ctx, admin, tn.ID)
			if err != nil || len(ms) != 1 || ms[0].Email != "ada@acme.example" || ms[0].Role != auth.RoleOwner {
				t.Fatalf("members %+v, %v", ms, err)
			}
		})
	})
}

func BenchmarkAuthenticateKey(b *testing.B) {
	st := storetest.OpenSQLite(b)
	svc := platformtest.New(b, st, platform.Options{Sealer: mustSealer(b)})
	_, key, err := svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: "acme"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := svc.Auth().Authenticate(ctx, key.Key); err != nil {
			b.Fatal(err)
		}
	}
}
