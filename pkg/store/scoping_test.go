package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/parleyhq/parley/pkg/store"
)

// TestTenantScoping checks that tenant B's handle, st.Tenant(b.ID), cannot
// see or change tenant A's rows through any subject, and that what it
// writes lands in tenant B whatever the written struct says.
func TestTenantScoping(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		asA, asB := st.Tenant(a.ID), st.Tenant(b.ID)
		bot := mustBot(t, st, a.ID, "support")
		mustVersion(t, st, bot, "fp1")
		key := &store.APIKey{TenantID: a.ID, Name: "k", Kind: "sk", Scopes: store.StringList{"admin"},
			Hash: "hash-a", Prefix: "sk_abcd", Last4: "wxyz"}
		if err := asA.Keys().Create(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := asA.Secrets().Put(ctx, &store.Secret{TenantID: a.ID, Name: "token", Nonce: []byte("n"), Ciphertext: []byte("c")}); err != nil {
			t.Fatal(err)
		}
		if err := asA.Providers().Put(ctx, &store.Provider{TenantID: a.ID, Name: "claude", Kind: "anthropic", BaseURL: "https://api.anthropic.com", APIKeySecret: "token"}); err != nil {
			t.Fatal(err)
		}
		hook := &store.WebhookEndpoint{TenantID: a.ID, Name: "crm", URL: "https://crm.example/hook", Events: `["*"]`, Enabled: true}
		if err := asA.Webhooks().Create(ctx, hook); err != nil {
			t.Fatal(err)
		}
		channel := &store.Channel{TenantID: a.ID, BotID: bot.ID, Kind: "webhook", Name: "site", Enabled: true, Config: "{}"}
		if err := asA.Channels().Create(ctx, channel); err != nil {
			t.Fatal(err)
		}
		dialog := mustDialog(t, st, bot)
		owner := &store.User{Email: "owner@a.example"}
		if err := st.Users().Create(ctx, owner); err != nil {
			t.Fatal(err)
		}
		if _, err := asA.Members().Put(ctx, owner.ID, "owner"); err != nil {
			t.Fatal(err)
		}

		notFound := []struct {
			name string
			call func() error
		}{
			{"getting A's bot by id", func() error { _, err := asB.Bots().Get(ctx, bot.ID); return err }},
			{"getting A's bot by slug", func() error { _, err := asB.Bots().Get(ctx, bot.Slug); return err }},
			{"getting A's version", func() error { _, err := asB.Versions().Get(ctx, bot.ID, 1); return err }},
			{"getting A's latest version", func() error { _, err := asB.Versions().Latest(ctx, bot.ID); return err }},
			{"publishing A's version", func() error { _, err := asB.Versions().Publish(ctx, bot.ID, 1); return err }},
			{"renaming A's bot", func() error { return asB.Bots().Rename(ctx, bot.ID, "stolen") }},
			{"getting A's key", func() error { _, err := asB.Keys().Get(ctx, key.ID); return err }},
			{"revoking A's key", func() error { _, err := asB.Keys().Revoke(ctx, key.ID, time.Now()); return err }},
			{"deleting A's secret", func() error { return asB.Secrets().Delete(ctx, "token") }},
			{"deleting A's provider", func() error { return asB.Providers().Delete(ctx, "claude") }},
			{"getting A's webhook endpoint", func() error { _, err := asB.Webhooks().Get(ctx, hook.ID); return err }},
			{"deleting A's webhook endpoint", func() error { return asB.Webhooks().Delete(ctx, hook.ID) }},
			{"getting A's channel", func() error { _, err := asB.Channels().Get(ctx, channel.ID); return err }},
			{"deleting A's channel", func() error { return asB.Channels().Delete(ctx, channel.ID) }},
			{"getting A's dialog", func() error { _, err := asB.Dialogs().Get(ctx, dialog.ID); return err }},
			{"closing A's dialog", func() error { _, err := asB.Dialogs().Close(ctx, dialog.ID, "stolen"); return err }},
			{"reading the outcome facts of A's dialog", func() error { _, err := asB.Insights().Facts(ctx, dialog.ID); return err }},
			{"settling A's dialog", func() error {
				_, err := asB.Insights().Settle(ctx, store.Settlement{DialogID: dialog.ID, Next: store.Verdict{Outcome: store.OutcomeResolved}, Now: time.Now()})
				return err
			}},
			{"labelling A's dialog", func() error { return asB.Insights().SetLabels(ctx, dialog.ID, []string{"stolen"}) }},
			{"appending to A's dialog", func() error {
				return asB.Messages().Append(ctx, &store.Message{TenantID: a.ID, DialogID: dialog.ID, Kind: "user", Role: "user"})
			}},
			{"getting A's member", func() error { _, err := asB.Members().Get(ctx, owner.ID); return err }},
			{"removing A's member", func() error { return asB.Members().Delete(ctx, owner.ID) }},
		}
		for _, tc := range notFound {
			t.Run(tc.name+" as tenant B is not found", func(t *testing.T) {
				wantErr(t, tc.call(), store.ErrNotFound)
			})
		}

		t.Run("tenant B's lists are empty", func(t *testing.T) {
			bots, _, err := asB.Bots().List(ctx, store.Page{})
			if err != nil || len(bots) != 0 {
				t.Fatalf("bots %v, %v", bots, err)
			}
			keys, _, err := asB.Keys().List(ctx, store.Page{})
			if err != nil || len(keys) != 0 {
				t.Fatalf("keys %v, %v", keys, err)
			}
			secrets, err := asB.Secrets().List(ctx)
			if err != nil || len(secrets) != 0 {
				t.Fatalf("secrets %v, %v", secrets, err)
			}
			providers, err := asB.Providers().List(ctx)
			if err != nil || len(providers) != 0 {
				t.Fatalf("providers %v, %v", providers, err)
			}
			if got, err := asB.Providers().Get(ctx, []string{"claude"}); err != nil || len(got) != 0 {
				t.Fatalf("providers by name %v, %v", got, err)
			}
			versions, _, err := asB.Versions().List(ctx, bot.ID, store.Page{})
			if err != nil || len(versions) != 0 {
				t.Fatalf("versions %v, %v", versions, err)
			}
			hooks, err := asB.Webhooks().List(ctx)
			if err != nil || len(hooks) != 0 {
				t.Fatalf("webhooks %v, %v", hooks, err)
			}
			channels, err := asB.Channels().List(ctx)
			if err != nil || len(channels) != 0 {
				t.Fatalf("channels %v, %v", channels, err)
			}
			dialogs, _, err := asB.Dialogs().List(ctx, store.DialogFilter{}, store.Page{})
			if err != nil || len(dialogs) != 0 {
				t.Fatalf("dialogs %v, %v", dialogs, err)
			}
			members, err := asB.Members().List(ctx)
			if err != nil || len(members) != 0 {
				t.Fatalf("members %v, %v", members, err)
			}
		})
		t.Run("tenant A's rows are untouched", func(t *testing.T) {
			k, err := asA.Keys().Get(ctx, key.ID)
			if err != nil || k.RevokedAt != nil {
				t.Fatalf("key %+v, %v", k, err)
			}
			got, err := asA.Bots().Get(ctx, bot.Slug)
			if err != nil || got.Name != bot.Name || got.PublishedVersion != 0 {
				t.Fatalf("bot %+v, %v", got, err)
			}
			if s, _ := asA.Secrets().List(ctx); len(s) != 1 {
				t.Fatalf("secrets %v", s)
			}
			if p, _ := asA.Providers().Get(ctx, []string{"claude"}); len(p) != 1 || p[0].Headers != "{}" {
				t.Fatalf("providers %+v", p)
			}
			if _, err := asA.Webhooks().Get(ctx, hook.ID); err != nil {
				t.Fatalf("webhook endpoint: %v", err)
			}
			if _, err := asA.Channels().Get(ctx, channel.ID); err != nil {
				t.Fatalf("channel: %v", err)
			}
			if d, err := asA.Dialogs().Get(ctx, dialog.ID); err != nil || d.Status == store.DialogClosed {
				t.Fatalf("dialog %+v, %v", d, err)
			}
			if msgs, err := asA.Messages().List(ctx, dialog.ID, 0); err != nil || len(msgs) != 0 {
				t.Fatalf("messages %v, %v", msgs, err)
			}
			if _, err := asA.Members().Get(ctx, owner.ID); err != nil {
				t.Fatalf("member: %v", err)
			}
		})
		t.Run("what B's handle writes lands in tenant B whatever the struct says", func(t *testing.T) {
			planted := &store.Bot{TenantID: a.ID, Slug: "planted", Name: "planted"}
			if err := asB.Bots().Create(ctx, planted); err != nil {
				t.Fatal(err)
			}
			if planted.TenantID != b.ID {
				t.Fatalf("bot written to tenant %q, want B's %q", planted.TenantID, b.ID)
			}
			wantErr(t, func() error { _, err := asA.Bots().Get(ctx, "planted"); return err }(), store.ErrNotFound)
			if _, err := asB.Bots().Get(ctx, "planted"); err != nil {
				t.Fatalf("B's bot: %v", err)
			}
			if err := asB.Secrets().Put(ctx, &store.Secret{TenantID: a.ID, Name: "planted", Nonce: []byte("n"), Ciphertext: []byte("c")}); err != nil {
				t.Fatal(err)
			}
			if got, _ := asA.Secrets().Get(ctx, []string{"planted"}); len(got) != 0 {
				t.Fatalf("A sees B's secret %v", got)
			}
			if got, _ := asB.Secrets().Get(ctx, []string{"planted"}); len(got) != 1 {
				t.Fatalf("B's secret %v", got)
			}
		})
		t.Run("a transaction's handles write in the transaction", func(t *testing.T) {
			rollBack := errors.New("roll back")
			err := st.Tx(ctx, func(tx *store.Store) error {
				if err := tx.Tenant(a.ID).Bots().Create(ctx, &store.Bot{Slug: "rolled-back", Name: "r"}); err != nil {
					return err
				}
				return rollBack
			})
			wantErr(t, err, rollBack)
			wantErr(t, func() error { _, err := asA.Bots().Get(ctx, "rolled-back"); return err }(), store.ErrNotFound)
		})
		t.Run("the same bot slug may exist in two tenants", func(t *testing.T) {
			mustBot(t, st, b.ID, "support")
		})
		t.Run("a bot slug is unique within its tenant", func(t *testing.T) {
			wantErr(t, asA.Bots().Create(ctx, &store.Bot{TenantID: a.ID, Slug: "support", Name: "dup"}), store.ErrConflict)
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
		if err := st.Tenant(key.TenantID).Keys().Create(ctx, key); err != nil {
			t.Fatal(err)
		}
		t.Run("a key is found by its hash with its lists intact", func(t *testing.T) {
			got, err := st.KeyAuth().ByHash(ctx, "hash-1")
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
			wantErr(t, st.Tenant(dup.TenantID).Keys().Create(ctx, &dup), store.ErrConflict)
		})
		t.Run("revoking keeps the first revocation time", func(t *testing.T) {
			first := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			if _, err := st.Tenant(tn.ID).Keys().Revoke(ctx, key.ID, first); err != nil {
				t.Fatal(err)
			}
			k, err := st.Tenant(tn.ID).Keys().Revoke(ctx, key.ID, first.Add(time.Hour))
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
			if err := st.Tenant(tn.ID).Secrets().Put(ctx, &store.Secret{TenantID: tn.ID, Name: "crm", Nonce: []byte("n"), Ciphertext: []byte(ct)}); err != nil {
				t.Fatal(err)
			}
		}
		t.Run("putting a secret again replaces its value", func(t *testing.T) {
			put("one")
			put("two")
			rows, err := st.Tenant(tn.ID).Secrets().List(ctx)
			if err != nil || len(rows) != 1 || string(rows[0].Ciphertext) != "two" {
				t.Fatalf("rows %+v, %v", rows, err)
			}
		})
		t.Run("deleting an unknown secret is not found", func(t *testing.T) {
			wantErr(t, st.Tenant(tn.ID).Secrets().Delete(ctx, "nope"), store.ErrNotFound)
		})
	})
}

func TestVersions(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
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
			v, err := ts.Versions().Latest(ctx, bot.ID)
			if err != nil || v.Number != 3 {
				t.Fatalf("latest %+v, %v", v, err)
			}
		})
		t.Run("versions page by number", func(t *testing.T) {
			page1, next, err := ts.Versions().List(ctx, bot.ID, store.Page{Limit: 2})
			if err != nil || len(page1) != 2 || next != "2" {
				t.Fatalf("page 1: %d rows, next %q, %v", len(page1), next, err)
			}
			page2, next, err := ts.Versions().List(ctx, bot.ID, store.Page{Limit: 2, Cursor: next})
			if err != nil || len(page2) != 1 || page2[0].Number != 3 || next != "" {
				t.Fatalf("page 2: %+v, next %q, %v", page2, next, err)
			}
		})
		t.Run("a cursor that is not a number is rejected", func(t *testing.T) {
			_, _, err := ts.Versions().List(ctx, bot.ID, store.Page{Cursor: "x"})
			wantErr(t, err, store.ErrInvalidCursor)
		})
		t.Run("publishing sets the live version and rollback sets an older one", func(t *testing.T) {
			for _, n := range []int{3, 1} {
				b, err := ts.Versions().Publish(ctx, bot.ID, n)
				if err != nil || b.PublishedVersion != n {
					t.Fatalf("publish %d: %+v, %v", n, b, err)
				}
			}
		})
		t.Run("publishing a version that does not exist is not found", func(t *testing.T) {
			_, err := ts.Versions().Publish(ctx, bot.ID, 9)
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
