package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/apply/applytest"
)

// exampleConfig is a bot config from the example tenants, as users start
// from it.
func exampleConfig(t *testing.T) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../../tenants/acme-outdoor/bots/support.json")
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	return b
}

// apiError asserts err is an API error with the given status.
func apiError(t *testing.T, err error, status int) *apiclient.Error {
	t.Helper()
	var e *apiclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an API error with status %d", err, status)
	}
	if e.Status != status {
		t.Fatalf("got status %d (%s), want %d", e.Status, e, status)
	}
	return e
}

// TestTheServerLifecycleOfABot drives the real program over HTTP through the
// Go client, the way an operator and a tenant admin would.
func TestTheServerLifecycleOfABot(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		env["PARLEY_PLATFORM_TOKEN"] = "e2e-platform-token-with-enough-entropy"
		srv := startParley(t, env)
		ctx := context.Background()
		if err := srv.client("").Ready(ctx); err != nil {
			t.Fatalf("readyz: %v", err)
		}

		created, err := srv.client(env["PARLEY_PLATFORM_TOKEN"]).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatalf("create tenant with the platform token: %v", err)
		}
		if !strings.HasPrefix(created.APIKey.Key, "sk_") || !contains(created.APIKey.Scopes, "admin") {
			t.Fatalf("first key = %+v, want an sk_ admin key", created.APIKey)
		}
		admin := srv.client(created.APIKey.Key)

		config := exampleConfig(t)
		bot, err := admin.CreateBot(ctx, "acme", "support", config)
		if err != nil {
			t.Fatalf("create bot from the example config: %v", err)
		}
		if bot.Version.Number != 1 || bot.Bot.Name != "Acme Support" || bot.Version.Prompt == "" {
			t.Fatalf("create bot = %+v, want version 1 of Acme Support with its prompt", bot)
		}

		t.Run("a changed config becomes version 2; the same one again is version 2 still", func(t *testing.T) {
			v2, err := admin.CreateVersion(ctx, "acme", "support", applytest.WithGreeting(t, config, "Welcome back!"))
			if err != nil || v2.Number != 2 {
				t.Fatalf("version = %+v, %v; want number 2", v2, err)
			}
			again, err := admin.CreateVersion(ctx, "acme", "support", applytest.WithGreeting(t, config, "Welcome back!"))
			if err != nil || again.Number != 2 {
				t.Fatalf("saving the same config again = %+v, %v; want version 2 returned", again, err)
			}
		})

		t.Run("a broken config is 422 with a pointer per problem", func(t *testing.T) {
			broken := json.RawMessage(`{"basic_settings": {"nmae": "Typo"}, "native_tools": ["no_such_tool"]}`)
			_, err := admin.CreateVersion(ctx, "acme", "support", broken)
			e := apiError(t, err, http.StatusUnprocessableEntity)
			if e.Code != apiclient.CodeInvalid || len(e.Details) < 2 {
				t.Fatalf("error = %+v, want code invalid with at least two details", e)
			}
			for _, d := range e.Details {
				if !strings.HasPrefix(d.Pointer, "/") || d.Message == "" {
					t.Errorf("detail %+v has no pointer into the config or no message", d)
				}
			}
			vs, err := admin.ListVersions(ctx, "acme", "support", "")
			if err != nil || len(vs.Versions) != 2 {
				t.Fatalf("versions after the broken save = %+v, %v; want still 2", vs, err)
			}
		})

		t.Run("publishing version 2 and rolling back to 1", func(t *testing.T) {
			b, err := admin.Publish(ctx, "acme", "support", 2)
			if err != nil || b.PublishedVersion != 2 {
				t.Fatalf("publish 2 = %+v, %v", b, err)
			}
			if _, err := admin.Publish(ctx, "acme", "support", 1); err != nil {
				t.Fatalf("roll back to 1: %v", err)
			}
			got, err := admin.GetBot(ctx, "acme", "support")
			if err != nil || got.PublishedVersion != 1 {
				t.Fatalf("bot after rollback = %+v, %v; want version 1 live", got, err)
			}
			_, err = admin.Publish(ctx, "acme", "support", 9)
			apiError(t, err, http.StatusNotFound)
		})

		t.Run("a revoked key is refused on its very next request", func(t *testing.T) {
			k, err := admin.CreateAPIKey(ctx, "acme", apiclient.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"admin"}})
			if err != nil {
				t.Fatalf("create key: %v", err)
			}
			ci := srv.client(k.Key)
			if _, err := ci.ListBots(ctx, "acme", ""); err != nil {
				t.Fatalf("the new key does not work: %v", err)
			}
			revoked, err := admin.RevokeAPIKey(ctx, "acme", k.ID)
			if err != nil || revoked.RevokedAt == nil {
				t.Fatalf("revoke = %+v, %v", revoked, err)
			}
			_, err = ci.ListBots(ctx, "acme", "")
			apiError(t, err, http.StatusUnauthorized)
			list, err := admin.ListAPIKeys(ctx, "acme", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, listed := range list.APIKeys {
				if strings.Contains(listed.Prefix+listed.Last4, k.Key) {
					t.Errorf("the key list shows a whole key: %+v", listed)
				}
			}
		})

		t.Run("secrets are write-only", func(t *testing.T) {
			if _, err := admin.PutSecret(ctx, "acme", "crm_token", "very-secret-value"); err != nil {
				t.Fatal(err)
			}
			var raw json.RawMessage
			if err := admin.Do(ctx, http.MethodGet, "/v1/tenants/acme/secrets", nil, &raw); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), "crm_token") || strings.Contains(string(raw), "very-secret-value") {
				t.Errorf("secret list = %s, want the name and never the value", raw)
			}
		})

		if code := srv.stop(); code != 0 {
			t.Errorf("serve exited with %d after a graceful stop, want 0", code)
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
