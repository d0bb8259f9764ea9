package store_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/parleyhq/parley/pkg/store"
)

// TestTenantScoping checks that every tenant-scoped method, given tenant B,
// cannot see or change tenant A's rows.
func TestTenantScoping(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		bot := mustBot(t, st, a.ID, "support")
		mustVersion(t, st, bot, "fp1")
		key := &store.APIKey{TenantID: a.ID, Name: "k", Kind: "sk", Scopes: store.StringList{"admin"},
			Hash: "hash-a", Prefix: "sk_abcd", Last4: "wxyz"}
		if err := st.CreateAPIKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := st.PutSecret(ctx, &store.Secret{TenantID: a.ID, Name: "token", Nonce: []byte("n"), Ciphertext: []byte("c")}); err != nil {
			t.Fatal(err)
		}
		if err := st.PutProvider(ctx, &store.Provider{TenantID: a.ID, Name: "claude", Kind: "anthropic", BaseURL: "https://api.anthropic.com", APIKeySecret: "token"}); err != nil {
			t.Fatal(err)
		}

		notFound := []struct {
			name string
			call func() error
		}{
			{"getting A's bot by id", func() error { _, err := st.GetBot(ctx, b.ID, bot.ID); return err }},
			{"getting A's bot by slug", func() error { _, err := st.GetBot(ctx, b.ID, bot.Slug); return err }},
			{"getting A's version", func() error { _, err := st.GetVersion(ctx, b.ID, bot.ID, 1); return err }},
			{"getting A's latest version", func() error { _, err := st.LatestVersion(ctx, b.ID, bot.ID); return err }},
			{"publishing A's version", func() error { _, err := st.PublishVersion(ctx, b.ID, bot.ID, 1); return err }},
			{"renaming A's bot", func() error { return st.UpdateBotName(ctx, b.ID, bot.ID, "stolen") }},
			{"getting A's key", func() error { _, err := st.GetAPIKey(ctx, b.ID, key.ID); return err }},
			{"revoking A's key", func() error { _, err := st.RevokeAPIKey(ctx, b.ID, key.ID, time.Now()); return err }},
			{"deleting A's secret", func() error { return st.DeleteSecret(ctx, b.ID, "token") }},
			{"deleting A's provider", func() error { return st.DeleteProvider(ctx, b.ID, "claude") }},
		}
		for _, tc := range notFound {
			t.Run(tc.name+" as tenant B is not found", func(t *testing.T) {
				wantErr(t, tc.call(), store.ErrNotFound)
			})
		}

		t.Run("tenant B's lists are empty", func(t *testing.T) {
			bots, _, err := st.ListBots(ctx, b.ID, store.Page{})
			if err != nil || len(bots) != 0 {
				t.Fatalf("bots %v, %v", bots, err)
			}
			keys, _, err := st.ListAPIKeys(ctx, b.ID, store.Page{})
			if err != nil || len(keys) != 0 {
				t.Fatalf("keys %v, %v", keys, err)
			}
			secrets, err := st.ListSecrets(ctx, b.ID)
			if err != nil || len(secrets) != 0 {
				t.Fatalf("secrets %v, %v", secrets, err)
			}
			providers, err := st.ListProviders(ctx, b.ID)
			if err != nil || len(providers) != 0 {
				t.Fatalf("providers %v, %v", providers, err)
			}
			if got, err := st.GetProviders(ctx, b.ID, []string{"claude"}); err != nil || len(got) != 0 {
				t.Fatalf("providers by name %v, %v", got, err)
			}
			versions, _, err := st.ListVersions(ctx, b.ID, bot.ID, store.Page{})
			if err != nil || len(versions) != 0 {
				t.Fatalf("versions %v, %v", versions, err)
			}
		})
		t.Run("tenant A's rows are untouched", func(t *testing.T) {
			k, err := st.GetAPIKey(ctx, a.ID, key.ID)
			if err != nil || k.RevokedAt != nil {
				t.Fatalf("key %+v, %v", k, err)
			}
			got, err := st.GetBot(ctx, a.ID, bot.Slug)
			if err != nil || got.Name != bot.Name || got.PublishedVersion != 0 {
				t.Fatalf("bot %+v, %v", got, err)
			}
			if s, _ := st.ListSecrets(ctx, a.ID); len(s) != 1 {
				t.Fatalf("secrets %v", s)
			}
			if p, _ := st.GetProviders(ctx, a.ID, []string{"claude"}); len(p) != 1 || p[0].Headers != "{}" {
				t.Fatalf("providers %+v", p)
			}
		})
		t.Run("the same bot slug may exist in two tenants", func(t *testing.T) {
			mustBot(t, st, b.ID, "support")
		})
		t.Run("a bot slug is unique within its tenant", func(t *testing.T) {
			wantErr(t, st.CreateBot(ctx, &store.Bot{TenantID: a.ID, Slug: "support", Name: "dup"}), store.ErrConflict)
		})
	})
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		bot := mustBot(t, st, tn.ID, "widget")
		key := &store.APIKey{TenantID: tn.ID, Name: "widget", Kind: "pk", Scopes: store.StringList{"chat"},
			BotID: &bot.ID, Origins: store.StringList{"https://acme.example"}, Hash: "hash-1", Prefix: "pk_abcd", Last4: "wxyz"}
		if err := st.CreateAPIKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		t.Run("a key is found by its hash with its lists intact", func(t *testing.T) {
			got, err := st.GetAPIKeyByHash(ctx, "hash-1")
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != key.ID || *got.BotID != bot.ID || len(got.Origins) != 1 || got.Scopes[0] != "chat" {
				t.Fatalf("got %+v", got)
			}
		})
		t.Run("a second key with the same hash is a conflict", func(t *testing.T) {
			dup := *key
			dup.ID = ""
			wantErr(t, st.CreateAPIKey(ctx, &dup), store.ErrConflict)
		})
		t.Run("revoking keeps the first revocation time", func(t *testing.T) {
			first := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			if _, err := st.RevokeAPIKey(ctx, tn.ID, key.ID, first); err != nil {
				t.Fatal(err)
			}
			k, err := st.RevokeAPIKey(ctx, tn.ID, key.ID, first.Add(time.Hour))
			if err != nil || !k.RevokedAt.Equal(first) {
				t.Fatalf("revoked at %v, %v", k.RevokedAt, err)
			}
		})
	})
}

func TestAPIKeyActiveAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	cases := []struct {
		name string
		key  store.APIKey
		want bool
	}{
		{"a key without expiry or revocation is active", store.APIKey{}, true},
		{"a key expiring later is active", store.APIKey{ExpiresAt: &future}, true},
		{"a key that expired is not active", store.APIKey{ExpiresAt: &past}, false},
		{"a key expiring this instant is not active", store.APIKey{ExpiresAt: &now}, false},
		{"a revoked key is not active", store.APIKey{RevokedAt: &past}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.key.ActiveAt(now); got != tc.want {
				t.Fatalf("ActiveAt = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		put := func(ct string) {
			t.Helper()
			if err := st.PutSecret(ctx, &store.Secret{TenantID: tn.ID, Name: "crm", Nonce: []byte("n"), Ciphertext: []byte(ct)}); err != nil {
				t.Fatal(err)
			}
		}
		t.Run("putting a secret again replaces its value", func(t *testing.T) {
			put("one")
			put("two")
			rows, err := st.ListSecrets(ctx, tn.ID)
			if err != nil || len(rows) != 1 || string(rows[0].Ciphertext) != "two" {
				t.Fatalf("rows %+v, %v", rows, err)
			}
		})
		t.Run("deleting an unknown secret is not found", func(t *testing.T) {
			wantErr(t, st.DeleteSecret(ctx, tn.ID, "nope"), store.ErrNotFound)
		})
	})
}

func TestVersions(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		bot := mustBot(t, st, tn.ID, "support")
		other := mustBot(t, st, tn.ID, "sales")
		t.Run("versions are numbered from 1 per bot", func(t *testing.T) {
			for want := 1; want <= 3; want++ {
				if v := mustVersion(t, st, bot, "fp"); v.Number != want {
					t.Fatalf("number %d, want %d", v.Number, want)
				}
			}
			if v := mustVersion(t, st, other, "fp"); v.Number != 1 {
				t.Fatalf("the other bot's first version is %d", v.Number)
			}
		})
		t.Run("a number taken by a concurrent writer is a conflict", func(t *testing.T) {
			err := st.DB().Create(&store.BotVersion{ID: store.NewID(store.PrefixVersion), TenantID: tn.ID,
				BotID: bot.ID, Number: 2, Config: "{}", Fingerprint: "x", CreatedBy: "t"}).Error
			wantErr(t, err, gorm.ErrDuplicatedKey)
		})
		t.Run("the latest version is the highest number", func(t *testing.T) {
			v, err := st.LatestVersion(ctx, tn.ID, bot.ID)
			if err != nil || v.Number != 3 {
				t.Fatalf("latest %+v, %v", v, err)
			}
		})
		t.Run("versions page by number", func(t *testing.T) {
			page1, next, err := st.ListVersions(ctx, tn.ID, bot.ID, store.Page{Limit: 2})
			if err != nil || len(page1) != 2 || next != "2" {
				t.Fatalf("page 1: %d rows, next %q, %v", len(page1), next, err)
			}
			page2, next, err := st.ListVersions(ctx, tn.ID, bot.ID, store.Page{Limit: 2, Cursor: next})
			if err != nil || len(page2) != 1 || page2[0].Number != 3 || next != "" {
				t.Fatalf("page 2: %+v, next %q, %v", page2, next, err)
			}
		})
		t.Run("a cursor that is not a number is rejected", func(t *testing.T) {
			_, _, err := st.ListVersions(ctx, tn.ID, bot.ID, store.Page{Cursor: "x"})
			wantErr(t, err, store.ErrInvalidCursor)
		})
		t.Run("publishing sets the live version and rollback sets an older one", func(t *testing.T) {
			for _, n := range []int{3, 1} {
				b, err := st.PublishVersion(ctx, tn.ID, bot.ID, n)
				if err != nil || b.PublishedVersion != n {
					t.Fatalf("publish %d: %+v, %v", n, b, err)
				}
			}
		})
		t.Run("publishing a version that does not exist is not found", func(t *testing.T) {
			_, err := st.PublishVersion(ctx, tn.ID, bot.ID, 9)
			wantErr(t, err, store.ErrNotFound)
		})
	})
}

func TestIDsSortInCreationOrder(t *testing.T) {
	t.Parallel()
	prev := store.NewID(store.PrefixBot)
	for range 50 {
		time.Sleep(time.Millisecond)
		next := store.NewID(store.PrefixBot)
		if next <= prev {
			t.Fatalf("%s made after %s sorts before it", next, prev)
		}
		prev = next
	}
}
