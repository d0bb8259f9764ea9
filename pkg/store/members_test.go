package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// TestTwoOwnersDemotingEachOtherAtOnceLeaveOneOwner interleaves two
// transactions the way two owners' concurrent demotions of each other
// would: the first has checked that two owners remain and demoted one,
// not yet committed, when the second checks. Members.Lock must make the
// second wait for the first and then see one owner; without it, both see
// two owners and the tenant ends with none.
func TestTwoOwnersDemotingEachOtherAtOnceLeaveOneOwner(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		var owners []string
		for _, email := range []string{"ada@acme.example", "bo@acme.example"} {
			u := &store.User{Email: email, PasswordHash: "x"}
			if err := st.Users().Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Tenant(tn.ID).Members().Put(ctx, u.ID, "owner"); err != nil {
				t.Fatal(err)
			}
			owners = append(owners, u.ID)
		}
		// demote demotes userID unless it is the last owner, as
		// platform.SetMemberRole does.
		demote := func(tx *store.Store, userID string) (bool, error) {
			if err := tx.Tenant(tn.ID).Members().Lock(ctx); err != nil {
				return false, err
			}
			n, err := tx.Tenant(tn.ID).Members().CountOwners(ctx)
			if err != nil || n <= 1 {
				return false, err
			}
			_, err = tx.Tenant(tn.ID).Members().Put(ctx, userID, "admin")
			return err == nil, err
		}

		demoted, release, firstDone := make(chan int, 1), make(chan struct{}), make(chan error, 1)
		go func() {
			firstDone <- st.Tx(ctx, func(tx *store.Store) error {
				ok, err := demote(tx, owners[1])
				if err != nil || !ok {
					t.Errorf("the first demotion: %v, %v", ok, err)
				}
				demoted <- backendPID(t, tx)
				<-release
				return nil
			})
		}()
		firstPID := <-demoted
		secondOK, secondDone := make(chan bool, 1), make(chan error, 1)
		go func() {
			secondDone <- st.Tx(ctx, func(tx *store.Store) error {
				ok, err := demote(tx, owners[0])
				secondOK <- ok
				return err
			})
		}()
		// The second transaction waits for the first (the lock), or, were
		// it not locked out, runs to its end; either is awaited, then the
		// first commits.
		select {
		case <-waitingFor(t, st, firstPID):
		case err := <-secondDone:
			secondDone <- err
		}
		close(release)
		if err := <-firstDone; err != nil {
			t.Fatal(err)
		}
		if err := <-secondDone; err != nil {
			t.Fatal(err)
		}
		if <-secondOK {
			t.Errorf("the second demotion went ahead while the first was uncommitted")
		}
		n, err := st.Tenant(tn.ID).Members().CountOwners(ctx)
		if err != nil || n != 1 {
			t.Fatalf("%d owners left (%v), want 1", n, err)
		}
	})
}

// backendPID is the PostgreSQL backend of tx, 0 on SQLite.
func backendPID(t *testing.T, tx *store.Store) int {
	if tx.Dialect() != store.DialectPostgres {
		return 0
	}
	var pid int
	if err := tx.DB().Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
		t.Error(err)
	}
	return pid
}

// waitingFor closes its channel once another request of st waits behind
// the transaction of backend pid: on PostgreSQL a backend that pid blocks,
// on SQLite (one writer, one pooled connection) a request waiting for the
// connection.
func waitingFor(t *testing.T, st *store.Store, pid int) <-chan struct{} {
	done := make(chan struct{})
	sqlDB, err := st.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	waits := sqlDB.Stats().WaitCount
	go func() {
		defer close(done)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if st.Dialect() != store.DialectPostgres {
				if sqlDB.Stats().WaitCount > waits {
					return
				}
				continue
			}
			var n int
			err := st.DB().Raw("SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", pid).Scan(&n).Error
			if err == nil && n > 0 {
				return
			}
		}
	}()
	return done
}

// TestATenantsAuditLogAndInvitesGoWithIt: deleting a tenant's row deletes
// its audit log and invites, on both databases (foreign keys cascade).
func TestATenantsAuditLogAndInvitesGoWithIt(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		gone, kept := mustTenant(t, st, "gone"), mustTenant(t, st, "kept")
		u := &store.User{Email: "eve@example.com"}
		if err := st.Users().Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		for _, tn := range []*store.Tenant{gone, kept} {
			if err := st.Tenant(tn.ID).Audit().Add(ctx, &store.AuditEntry{TenantID: tn.ID, ActorKind: "operator", Action: "secret.set", Target: "x"}); err != nil {
				t.Fatal(err)
			}
			if err := st.Tenant(tn.ID).Members().Invite(ctx, &store.Invite{TokenHash: tn.ID, UserID: u.ID, TenantID: tn.ID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.DB().Exec("DELETE FROM tenants WHERE id = ?", gone.ID).Error; err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			tn   *store.Tenant
			want int64
		}{{gone, 0}, {kept, 1}} {
			var entries, invites int64
			st.DB().Table("audit_log").Where("tenant_id = ?", tc.tn.ID).Count(&entries)
			st.DB().Table("invites").Where("tenant_id = ?", tc.tn.ID).Count(&invites)
			if entries != tc.want || invites != tc.want {
				t.Errorf("tenant %s: %d audit entries and %d invites, want %d of each", tc.tn.Slug, entries, invites, tc.want)
			}
		}
	})
}
