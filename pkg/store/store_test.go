package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// mustOpenStore runs fn on SQLite, and on PostgreSQL when
// PARLEY_TEST_DATABASE_URL is set.
func mustOpenStore(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	storetest.ForEach(t, fn)
}

func mustTenant(t *testing.T, st *store.Store, slug string) *store.Tenant {
	t.Helper()
	tn := &store.Tenant{Slug: slug, Name: "Tenant " + slug}
	if err := st.Tenants().Create(context.Background(), tn); err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return tn
}

func mustBot(t *testing.T, st *store.Store, tenantID, slug string) *store.Bot {
	t.Helper()
	b := &store.Bot{TenantID: tenantID, Slug: slug, Name: "Bot " + slug}
	if err := st.Tenant(tenantID).Bots().Create(context.Background(), b); err != nil {
		t.Fatalf("create bot %s: %v", slug, err)
	}
	return b
}

func mustVersion(t *testing.T, st *store.Store, b *store.Bot, fingerprint string) *store.BotVersion {
	t.Helper()
	v := &store.BotVersion{TenantID: b.TenantID, BotID: b.ID, Config: `{"basic_settings":{"name":"x"}}`,
		Prompt: "p", Fingerprint: fingerprint, CreatedBy: "platform"}
	if err := st.Tenant(v.TenantID).Versions().Add(context.Background(), v); err != nil {
		t.Fatalf("add version: %v", err)
	}
	return v
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t.Run("running it again changes nothing", func(t *testing.T) {
			before, err := st.SchemaVersion(ctx)
			if err != nil || before < 1 {
				t.Fatalf("schema version %d, %v after first migrate", before, err)
			}
			if err := st.Migrate(ctx); err != nil {
				t.Fatalf("second migrate: %v", err)
			}
			after, _ := st.SchemaVersion(ctx)
			if after != before {
				t.Fatalf("schema version moved from %d to %d", before, after)
			}
			var n int64
			st.DB().Table("schema_migrations").Count(&n)
			if int(n) != after {
				t.Fatalf("%d rows in schema_migrations for version %d", n, after)
			}
		})
		t.Run("foreign keys are enforced", func(t *testing.T) {
			err := st.Tenant("ten_missing").Keys().Create(ctx, &store.APIKey{TenantID: "ten_missing", Name: "k", Kind: "sk",
				Hash: "h-fk", Prefix: "sk_x", Last4: "abcd"})
			if err == nil {
				t.Fatal("a key for a tenant that does not exist was stored")
			}
		})
	})
}

func TestTenants(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := mustTenant(t, st, "acme")
		t.Run("a tenant is found by id and by slug", func(t *testing.T) {
			for _, ref := range []string{a.ID, a.Slug} {
				got, err := st.Tenants().Get(ctx, ref)
				if err != nil || got.ID != a.ID {
					t.Fatalf("GetTenant(%q) = %+v, %v", ref, got, err)
				}
			}
		})
		t.Run("a taken slug is a conflict", func(t *testing.T) {
			wantErr(t, st.Tenants().Create(ctx, &store.Tenant{Slug: "acme", Name: "again"}), store.ErrConflict)
		})
		t.Run("an unknown tenant is not found", func(t *testing.T) {
			_, err := st.Tenants().Get(ctx, "nope")
			wantErr(t, err, store.ErrNotFound)
		})
	})
}

func TestPagingWalksEveryRowOnce(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		want := map[string]bool{}
		for i := range 7 {
			want[mustTenant(t, st, fmt.Sprintf("t%d", i)).ID] = true
		}
		seen := map[string]bool{}
		var last string
		p := store.Page{Limit: 3}
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			rows, next, err := st.Tenants().List(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if seen[r.ID] || r.ID <= last {
					t.Fatalf("row %s out of order or repeated", r.ID)
				}
				seen[r.ID], last = true, r.ID
			}
			if next == "" {
				break
			}
			p.Cursor = next
		}
		if len(seen) != len(want) {
			t.Fatalf("saw %d tenants, want %d", len(seen), len(want))
		}
	})
}

func TestUsersAndMemberships(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		u := &store.User{Email: " Ada@Example.com ", PasswordHash: "x"}
		if err := st.Users().Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		t.Run("emails match whatever their case", func(t *testing.T) {
			got, err := st.Users().ByEmail(ctx, "ADA@example.COM")
			if err != nil || got.ID != u.ID {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
		t.Run("the same email in another case is a conflict", func(t *testing.T) {
			wantErr(t, st.Users().Create(ctx, &store.User{Email: "ada@EXAMPLE.com", PasswordHash: "y"}), store.ErrConflict)
		})
		t.Run("putting a membership again replaces the role", func(t *testing.T) {
			if _, err := st.Tenant(tn.ID).Members().Put(ctx, u.ID, "viewer"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Tenant(tn.ID).Members().Put(ctx, u.ID, "admin"); err != nil {
				t.Fatal(err)
			}
			ms, err := st.Users().Memberships(ctx, u.ID)
			if err != nil || len(ms) != 1 || ms[0].Role != "admin" {
				t.Fatalf("memberships %+v, %v", ms, err)
			}
		})
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		u := &store.User{Email: "ada@example.com", PasswordHash: "x"}
		if err := st.Users().Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if err := st.Sessions().Create(ctx, &store.Session{TokenHash: "h1", UserID: u.ID, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		t.Run("a live session is found", func(t *testing.T) {
			if _, err := st.Sessions().Get(ctx, "h1", now); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("an expired session is not found", func(t *testing.T) {
			_, err := st.Sessions().Get(ctx, "h1", now.Add(2*time.Hour))
			wantErr(t, err, store.ErrNotFound)
		})
		t.Run("pruning removes only ended sessions", func(t *testing.T) {
			if err := st.Sessions().Create(ctx, &store.Session{TokenHash: "old", UserID: u.ID, ExpiresAt: now.Add(-time.Minute)}); err != nil {
				t.Fatal(err)
			}
			if err := st.Sessions().DeleteExpired(ctx, now); err != nil {
				t.Fatal(err)
			}
			var left []string
			st.DB().Model(&store.Session{}).Order("token_hash").Pluck("token_hash", &left)
			if len(left) != 1 || left[0] != "h1" {
				t.Fatalf("sessions left %v", left)
			}
		})
		t.Run("deleting a session twice is fine", func(t *testing.T) {
			for range 2 {
				if err := st.Sessions().Delete(ctx, "h1"); err != nil {
					t.Fatal(err)
				}
			}
			_, err := st.Sessions().Get(ctx, "h1", now)
			wantErr(t, err, store.ErrNotFound)
		})
	})
}

func TestListsRefuseACursorTheyDidNotHandOut(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, cursor := range []string{"garbage", "ten_", "ten_0000000000000000000000000!", "' OR 1=1 --"} {
			if _, _, err := s.Tenants().List(ctx, store.Page{Cursor: cursor}); !errors.Is(err, store.ErrInvalidCursor) {
				t.Errorf("ListTenants(cursor %q) = %v, want ErrInvalidCursor", cursor, err)
			}
		}
		if _, _, err := s.Tenants().List(ctx, store.Page{Cursor: store.NewID(store.PrefixTenant)}); err != nil {
			t.Errorf("a well-formed cursor: %v", err)
		}
	})
}

// TestABurstReusesTheConnectionsOfTheLast is issue 29's dip: a server
// running between 10 and 20 statements at once must not close connections
// when a burst ends only to open new ones (a backend each) for the next.
func TestABurstReusesTheConnectionsOfTheLast(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("PARLEY_TEST_DATABASE_URL is not set")
	}
	st := storetest.OpenPostgres(t, url)
	sqlDB, err := st.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const burst = 15 // under the pool's 20
	backends := func() map[int]bool {
		conns := make([]*sql.Conn, burst) // all held at once: burst connections
		pids := map[int]bool{}
		for i := range conns {
			if conns[i], err = sqlDB.Conn(ctx); err != nil {
				t.Fatal(err)
			}
			var pid int
			if err := conns[i].QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			pids[pid] = true
		}
		for _, c := range conns {
			c.Close()
		}
		return pids
	}
	first, second := backends(), backends()
	for pid := range second {
		if !first[pid] {
			t.Fatalf("the second burst of %d opened new backends: %v after %v", burst, second, first)
		}
	}
}
