package apply

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
)

// membersFile is tenants/<slug>/members.json: who works in the tenant and
// with which role. Passwords never live here: a new member gets a one-time
// invite link, printed once.
type membersFile struct {
	Members []memberFile `json:"members"`
	path    string
}

type memberFile struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// liveMember is a member as the target has it.
type liveMember struct {
	email, role string
}

// readMembers reads dir/members.json when there is one, adding its
// problems to ps.
func readMembers(dir string, ps []Problem) (*membersFile, []Problem) {
	path := filepath.Join(dir, "members.json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, ps
	}
	mf := &membersFile{path: path}
	if err := readStrictJSON(path, mf); err != nil {
		return nil, append(ps, Problem{path, "-", err.Error()})
	}
	seen := map[string]bool{}
	for i, m := range mf.Members {
		at := fmt.Sprintf("/members/%d", i)
		if a, err := mail.ParseAddress(m.Email); err != nil || a.Address != strings.TrimSpace(m.Email) {
			ps = append(ps, Problem{path, at + "/email", "must be a plain email address such as ada@example.com"})
		}
		if !slices.Contains(auth.Roles(), m.Role) {
			ps = append(ps, Problem{path, at + "/role", "must be one of " + strings.Join(auth.Roles(), ", ")})
		}
		key := strings.ToLower(strings.TrimSpace(m.Email))
		if seen[key] {
			ps = append(ps, Problem{path, at + "/email", "is listed twice"})
		}
		seen[key] = true
	}
	return mf, ps
}

// members makes the tenant's members match members.json: new people are
// invited (their one-time link printed once), changed roles set, and with
// --prune people the file does not list removed. Promotions come before
// demotions and removals, so handing ownership from one person to another
// never passes through a tenant without an owner (which the platform
// refuses).
func (a *applier) members(ctx context.Context, t Tenant, exists bool) {
	if t.members == nil {
		return
	}
	live := map[string]string{}
	if exists {
		got, err := a.target.members(ctx, t.slug)
		if err != nil {
			a.fail(t.members.path, err)
			return
		}
		for _, m := range got {
			live[m.email] = m.role
		}
	}
	want := map[string]string{}
	var raise, lower []memberFile
	for _, m := range t.members.Members {
		email := strings.ToLower(strings.TrimSpace(m.Email))
		want[email] = m.Role
		cur, ok := live[email]
		switch {
		case ok && cur == m.Role:
			fmt.Fprintf(a.out, "  member %s: unchanged, %s\n", email, cur)
		case ok && roleRank(m.Role) < roleRank(cur):
			lower = append(lower, memberFile{email, m.Role})
		default:
			raise = append(raise, memberFile{email, m.Role})
		}
	}
	for _, m := range append(raise, lower...) {
		a.member(ctx, t, m, live)
	}
	if !a.prune {
		return
	}
	for _, email := range sortedKeys(live) {
		if _, ok := want[email]; !ok {
			a.remove(t.members.path, "member "+email, func() error { return a.target.removeMember(ctx, t.slug, email) })
		}
	}
}

// member invites m or changes its role.
func (a *applier) member(ctx context.Context, t Tenant, m memberFile, live map[string]string) {
	cur, ok := live[m.Email]
	if a.dryRun {
		if ok {
			fmt.Fprintf(a.out, "  member %s: would change from %s to %s\n", m.Email, cur, m.Role)
		} else {
			fmt.Fprintf(a.out, "  member %s: would be invited as %s\n", m.Email, m.Role)
		}
		return
	}
	if ok {
		if err := a.target.setMemberRole(ctx, t.slug, m.Email, m.Role); err != nil {
			a.fail(t.members.path, err)
			return
		}
		fmt.Fprintf(a.out, "  member %s: %s, was %s\n", m.Email, m.Role, cur)
		return
	}
	link, err := a.target.inviteMember(ctx, t.slug, m.Email, m.Role)
	if err != nil {
		a.fail(t.members.path, err)
		return
	}
	if link == "" {
		fmt.Fprintf(a.out, "  member %s: added as %s (has an account)\n", m.Email, m.Role)
		return
	}
	fmt.Fprintf(a.out, "  member %s: invited as %s; one-time link (shown once; after the server's address): %s\n", m.Email, m.Role, link)
}

// roleRank orders roles, strongest highest.
func roleRank(role string) int {
	roles := auth.Roles()
	return len(roles) - slices.Index(roles, role)
}
