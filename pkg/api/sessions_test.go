package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestPeopleSeeAndEndTheirSessionsAndAdminsSignMembersOut(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		adminKey := e.mustCreateTenant(t, "acme")
		e.mustCreateTenant(t, "beta")
		laptop, phone := signIn(t, e, "acme").Value, signIn(t, e, "acme").Value
		other := signIn(t, e, "beta").Value

		t.Run("the list shows both sessions, this one marked current", func(t *testing.T) {
			list, err := e.client(laptop).ListSessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Sessions) != 2 {
				t.Fatalf("%d sessions, want 2: %+v", len(list.Sessions), list.Sessions)
			}
			current := 0
			for _, s := range list.Sessions {
				if s.Current {
					current++
				}
				if s.Via != "password" || len(s.ID) != 16 {
					t.Errorf("session %+v: want via password and a 16-digit id", s)
				}
			}
			if current != 1 {
				t.Errorf("%d sessions marked current, want 1", current)
			}
		})

		t.Run("a session goes over the wire with exactly its fields", func(t *testing.T) {
			var list apiclient.SessionList
			body := e.strictGet(t, "/v1/auth/sessions", laptop, &list)
			wantKeys(t, body, []string{"sessions"})
			wantKeys(t, body, []string{"id", "via", "created_at", "expires_at", "current"}, "sessions", 0)
		})

		t.Run("someone else cannot end a session that is not theirs", func(t *testing.T) {
			mine, _ := e.client(phone).ListSessions(ctx)
			for _, s := range mine.Sessions {
				if err := e.client(other).EndSession(ctx, s.ID); apiCode(err) != http.StatusNotFound {
					t.Errorf("beta's owner ending acme's owner's session: %v, want 404", err)
				}
			}
			if err := e.client(laptop).EndSession(ctx, "not-an-id"); apiCode(err) != http.StatusNotFound {
				t.Errorf("ending a made-up session: %v, want 404", err)
			}
		})

		t.Run("ending the other session signs that device out, and only it", func(t *testing.T) {
			list, _ := e.client(laptop).ListSessions(ctx)
			for _, s := range list.Sessions {
				if !s.Current {
					if err := e.client(laptop).EndSession(ctx, s.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := e.client(phone).Me(ctx); apiCode(err) != http.StatusUnauthorized {
				t.Errorf("the ended session still works: %v", err)
			}
			if _, err := e.client(laptop).Me(ctx); err != nil {
				t.Errorf("the current session ended too: %v", err)
			}
		})

		t.Run("an admin signs a member out everywhere, audited", func(t *testing.T) {
			ended, err := e.client(adminKey).EndMemberSessions(ctx, "acme", "owner@acme.test")
			if err != nil {
				t.Fatal(err)
			}
			if ended.Ended != 1 {
				t.Errorf("ended %d sessions, want 1", ended.Ended)
			}
			if _, err := e.client(laptop).Me(ctx); apiCode(err) != http.StatusUnauthorized {
				t.Errorf("the member's session still works: %v", err)
			}
			log, err := e.client(adminKey).AuditLog(ctx, "acme", apiclient.AuditQuery{Action: platform.AuditMemberSessionsEnded})
			if err != nil || len(log.Entries) != 1 || log.Entries[0].Target != "owner@acme.test" {
				t.Fatalf("audit log: %+v, %v", log, err)
			}
			var strict apiclient.AuditLog
			body := e.strictGet(t, "/v1/tenants/acme/audit-log?action="+platform.AuditMemberSessionsEnded, adminKey, &strict)
			wantKeys(t, body, []string{"entries"})
			wantKeys(t, body, []string{"id", "actor", "action", "target", "detail", "ip", "at"}, "entries", 0)
			wantKeys(t, body, []string{"kind", "id", "name"}, "entries", 0, "actor")
			if _, err := e.client(adminKey).EndMemberSessions(ctx, "acme", "owner@beta.test"); apiCode(err) != http.StatusNotFound {
				t.Errorf("signing out someone of another tenant: %v, want 404", err)
			}
		})
	})
}
