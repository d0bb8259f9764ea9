package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/botconfig"
)

func TestApplyMembersFileInvitesChangesRolesAndPrunesAlikeOnBothTargets(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tg *targets) {
		dir := t.TempDir()
		applytest.WriteFile(t, filepath.Join(dir, "acme", "tenant.json"), `{"name": "Acme"}`)
		members := filepath.Join(dir, "acme", "members.json")
		applyBoth := func(t *testing.T, opts Options) []string {
			t.Helper()
			return tg.applyBoth(t, dir, opts)
		}
		state := func(t *testing.T) []liveMember {
			t.Helper()
			ctx := context.Background()
			db, err := tg.db.members(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			viaServer, err := tg.api.members(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range [][]liveMember{db, viaServer} {
				sort.Slice(l, func(i, j int) bool { return l[i].email < l[j].email })
			}
			if !reflect.DeepEqual(db, viaServer) {
				t.Fatalf("the database has %+v, the server %+v", db, viaServer)
			}
			return db
		}

		applytest.WriteFile(t, members, `{"members": [{"email": "Ada@acme.example", "role": "owner"}, {"email": "eve@acme.example", "role": "editor"}]}`)
		for _, out := range applyBoth(t, Options{}) {
			if strings.Count(out, "one-time link") != 2 || !strings.Contains(out, "/admin/#/invite/inv_") {
				t.Fatalf("the first apply printed no invite link per new member:\n%s", out)
			}
		}
		if got, want := state(t), []liveMember{{"ada@acme.example", "owner"}, {"eve@acme.example", "editor"}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("members %+v, want %+v", got, want)
		}

		t.Run("a second apply changes nothing", func(t *testing.T) {
			for _, out := range applyBoth(t, Options{}) {
				if strings.Contains(out, "invited") || strings.Count(out, "unchanged") != 2 {
					t.Fatalf("second apply:\n%s", out)
				}
			}
		})
		t.Run("a dry run of a handover writes nothing", func(t *testing.T) {
			applytest.WriteFile(t, members, `{"members": [{"email": "ada@acme.example", "role": "admin"}, {"email": "bo@acme.example", "role": "owner"}]}`)
			for _, out := range applyBoth(t, Options{DryRun: true, Prune: true}) {
				if !strings.Contains(out, "member bo@acme.example: would be invited as owner") || !strings.Contains(out, "member eve@acme.example: not in the directory; would be deleted") {
					t.Fatalf("dry run:\n%s", out)
				}
			}
			if got := state(t); len(got) != 2 || got[0].role != "owner" {
				t.Fatalf("a dry run changed the members: %+v", got)
			}
		})
		t.Run("ownership is handed over and a dropped member pruned", func(t *testing.T) {
			applyBoth(t, Options{Prune: true})
			if got, want := state(t), []liveMember{{"ada@acme.example", "admin"}, {"bo@acme.example", "owner"}}; !reflect.DeepEqual(got, want) {
				t.Fatalf("members %+v, want %+v", got, want)
			}
		})
		t.Run("a bad members file is refused before anything is written", func(t *testing.T) {
			applytest.WriteFile(t, members, `{"members": [{"email": "ada@acme.example", "role": "root"}, {"email": "not an email", "role": "viewer"}]}`)
			_, problems := ReadDir(dir, tg.getenv, botconfig.Options{})
			if got := fmt.Sprint(problems); !strings.Contains(got, "members.json: /members/0/role") || !strings.Contains(got, "members.json: /members/1/email") {
				t.Fatalf("problems: %v", problems)
			}
		})
	})
}
