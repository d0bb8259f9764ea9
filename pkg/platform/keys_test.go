package platform_test

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

func TestCreateAPIKey(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		bot := e.bot(t, admin, tn.Slug, "widget")
		past := e.clock.Now().Add(-time.Minute)
		valid := []struct {
			name string
			in   platform.APIKeyInput
			kind string
		}{
			{"an sk key with the chat scope", platform.APIKeyInput{Name: "backend", Scopes: []string{"chat"}}, auth.KindSecret},
			{"an sk key with both scopes", platform.APIKeyInput{Name: "ops", Scopes: []string{"admin", "chat", "chat"}}, auth.KindSecret},
			{"a pk key bound to a bot by slug", platform.APIKeyInput{Name: "site", Bot: "widget", Origins: []string{"https://Acme.example"}}, auth.KindPublishable},
			{"a pk key bound to a bot by id", platform.APIKeyInput{Name: "site", Kind: "pk", Bot: bot.ID, Origins: []string{"http://localhost:3000"}}, auth.KindPublishable},
		}
		for _, tc := range valid {
			t.Run(tc.name+" is created", func(t *testing.T) {
				k, err := e.svc.APIKeys().Create(ctx, admin, tn.Slug, tc.in)
				if err != nil {
					t.Fatal(err)
				}
				if k.Kind != tc.kind || auth.KeyKind(k.Key) != tc.kind {
					t.Fatalf("kind %q, key %q", k.Kind, k.Prefix)
				}
				p := e.authenticate(t, k.Key)
				if tc.kind == auth.KindPublishable && (p.BotID != bot.ID || p.Scopes[0] != auth.ScopeChat || p.Origins[0] != strings.ToLower(tc.in.Origins[0])) {
					t.Fatalf("principal %+v", p)
				}
			})
		}
		invalid := []struct {
			name     string
			in       platform.APIKeyInput
			pointers []string
		}{
			{"a key without name or scopes", platform.APIKeyInput{}, []string{"/name", "/scopes"}},
			{"an sk key with an unknown scope", platform.APIKeyInput{Name: "x", Scopes: []string{"chat", "root"}}, []string{"/scopes/1"}},
			{"an sk key with origins", platform.APIKeyInput{Name: "x", Kind: "sk", Scopes: []string{"chat"}, Origins: []string{"https://a.example"}}, []string{"/origins"}},
			{"a pk key without origins", platform.APIKeyInput{Name: "x", Bot: "widget"}, []string{"/origins"}},
			{"a pk key with a wildcard origin", platform.APIKeyInput{Name: "x", Bot: "widget", Origins: []string{"*"}}, []string{"/origins/0"}},
			{"a pk key with a path in its origin", platform.APIKeyInput{Name: "x", Bot: "widget", Origins: []string{"https://a.example/app"}}, []string{"/origins/0"}},
			{"a pk key with the admin scope", platform.APIKeyInput{Name: "x", Bot: "widget", Scopes: []string{"admin"}, Origins: []string{"https://a.example"}}, []string{"/scopes/0"}},
			{"a pk key for a bot that does not exist", platform.APIKeyInput{Name: "x", Bot: "ghost", Origins: []string{"https://a.example"}}, []string{"/bot"}},
			{"a pk key without a bot", platform.APIKeyInput{Name: "x", Kind: "pk", Origins: []string{"https://a.example"}}, []string{"/bot"}},
			{"a key of an unknown kind", platform.APIKeyInput{Name: "x", Kind: "rk"}, []string{"/kind"}},
			{"a key expiring in the past", platform.APIKeyInput{Name: "x", Scopes: []string{"chat"}, ExpiresAt: &past}, []string{"/expires_at"}},
		}
		for _, tc := range invalid {
			t.Run(tc.name+" is invalid", func(t *testing.T) {
				_, err := e.svc.APIKeys().Create(ctx, admin, tn.Slug, tc.in)
				wantInvalid(t, err, tc.pointers...)
			})
		}
	})
}

func TestKeyExpiryAndRevocationTakeEffectAtOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		expires := e.clock.Now().Add(time.Hour)
		short, err := e.svc.APIKeys().Create(ctx, admin, tn.ID, platform.APIKeyInput{Name: "short", Scopes: []string{"chat"}, ExpiresAt: &expires})
		if err != nil {
			t.Fatal(err)
		}
		other, err := e.svc.APIKeys().Create(ctx, admin, tn.ID, platform.APIKeyInput{Name: "other", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Run("a key works before it expires", func(t *testing.T) {
			e.authenticate(t, short.Key)
		})
		t.Run("a key is unauthorized once it expires", func(t *testing.T) {
			e.clock.Advance(time.Hour)
			_, err := e.svc.Auth().Authenticate(ctx, short.Key)
			wantCode(t, err, platform.CodeUnauthorized)
		})
		t.Run("a revoked key is unauthorized on the very next call", func(t *testing.T) {
			e.authenticate(t, other.Key)
			revoked, err := e.svc.APIKeys().Revoke(ctx, admin, tn.ID, other.ID)
			if err != nil || revoked.RevokedAt == nil {
				t.Fatalf("revoke: %+v, %v", revoked, err)
			}
			_, err = e.svc.Auth().Authenticate(ctx, other.Key)
			wantCode(t, err, platform.CodeUnauthorized)
		})
		t.Run("revoking again is not an error", func(t *testing.T) {
			if _, err := e.svc.APIKeys().Revoke(ctx, admin, tn.ID, other.ID); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("the list shows every key without its secret", func(t *testing.T) {
			keys, _, err := e.svc.APIKeys().List(ctx, admin, tn.ID, platform.ListOptions{})
			if err != nil || len(keys) != 3 {
				t.Fatalf("keys %+v, %v", keys, err)
			}
		})
		t.Run("a key records when it was last used", func(t *testing.T) {
			me, err := e.svc.Auth().Me(ctx, admin)
			if err != nil || me.Key == nil || me.Key.LastUsedAt == nil {
				t.Fatalf("me %+v, %v", me, err)
			}
		})
	})
}
