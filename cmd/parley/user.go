package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

const userUsage = `usage: parley user <command> [flags]

The operator's door to admin UI users and members, working on the database
like parley tenant (stop nothing; the server sees the changes at once):
  list [--tenant SLUG]                          users with their roles (pending: invited, no password yet)
  add --tenant SLUG --role ROLE EMAIL [--password-stdin]
                                                make EMAIL a member; without a password, prints a one-time invite link
  set-password EMAIL                            read a new password from the first line of stdin; ends the user's sessions
  set-role --tenant SLUG EMAIL ROLE             change a member's role (the last owner stays owner)
  remove --tenant SLUG EMAIL                    take a member out of the tenant (never the last owner)
  admin-key --tenant SLUG [--name NAME]         create an sk_ admin key, for when every key is lost; printed once
  break-glass --tenant SLUG EMAIL               let an owner sign in with a password for an hour although the
                                                tenant requires single sign-on (its provider is down); audited
  reset-two-factor EMAIL                        turn two-factor off for someone who lost their authenticator and
                                                recovery codes; they enrol again at their next sign-in; audited
Roles: owner, admin, editor, operator, viewer. Passwords: 12 to 72 bytes, not a common one.`

// user manages users and members: `parley user <command>`.
func (m *Main) user(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(m.Stderr, userUsage)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	commands := map[string]struct {
		positional int
		run        func(u userCommand) error
	}{
		"list":             {0, userCommand.list},
		"add":              {1, userCommand.add},
		"set-password":     {1, userCommand.setPassword},
		"set-role":         {2, userCommand.setRole},
		"remove":           {1, userCommand.remove},
		"admin-key":        {0, userCommand.adminKey},
		"break-glass":      {1, userCommand.breakGlass},
		"reset-two-factor": {1, userCommand.resetTwoFactor},
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(m.Stderr, "parley user: unknown command %q\n\n%s\n", args[0], userUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("parley user "+args[0], flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	u := userCommand{m: m, ctx: ctx, op: platform.Operator()}
	fs.StringVar(&u.tenant, "tenant", "", "the tenant's slug")
	fs.StringVar(&u.role, "role", "", "owner, admin, editor, operator or viewer")
	fs.StringVar(&u.name, "name", "recovery", "with admin-key: the key's name")
	fs.BoolVar(&u.passwordStdin, "password-stdin", false, "with add: read the user's password from the first line of stdin")
	fs.Usage = func() { fmt.Fprintln(m.Stderr, userUsage) }
	pos, helped, err := parseArgs(fs, args[1:], cmd.positional)
	if helped || err != nil {
		return err
	}
	u.args = pos
	if u.tenant == "" && args[0] != "list" && args[0] != "set-password" && args[0] != "reset-two-factor" {
		fmt.Fprintf(m.Stderr, "parley user %s: --tenant is required\n", args[0])
		return errUsage
	}
	d, err := m.openData(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close()
	u.svc = d.platform
	return describePlatformError(cmd.run(u))
}

// userCommand is one run of parley user with its flags.
type userCommand struct {
	m                  *Main
	ctx                context.Context
	svc                *platform.Service
	op                 *platform.Principal
	tenant, role, name string
	passwordStdin      bool
	args               []string
}

func (u userCommand) list() error {
	users, err := u.svc.Users().List(u.ctx, u.op)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(u.m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "EMAIL\tSTATUS\tROLES")
	for _, usr := range users {
		if u.tenant != "" && usr.Roles[u.tenant] == "" {
			continue
		}
		status := "active"
		if usr.Pending {
			status = "pending"
		}
		var roles []string
		for _, slug := range slices.Sorted(maps.Keys(usr.Roles)) {
			roles = append(roles, slug+":"+usr.Roles[slug])
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", usr.Email, status, strings.Join(roles, " "))
	}
	return w.Flush()
}

func (u userCommand) add() error {
	email := u.args[0]
	var password string
	if u.passwordStdin {
		var err error
		if password, err = passwordLine(u.m.Stdin); err != nil {
			return err
		}
		if msg := auth.CheckPassword(password, email); msg != "" {
			return fmt.Errorf("the password %s", msg)
		}
	}
	inv, err := u.svc.Members().Invite(u.ctx, u.op, u.tenant, email, u.role)
	if err != nil {
		return err
	}
	switch {
	case !inv.Pending:
		fmt.Fprintf(u.m.Stdout, "%s, who has an account (its password unchanged), is now %s of %s.\n", inv.Email, inv.Role, u.tenant)
	case password != "":
		// Accepting the invite at once sets the new account's password.
		if _, err := u.svc.Members().AcceptInvite(u.ctx, inv.Token, password, ""); err != nil {
			return err
		}
		fmt.Fprintf(u.m.Stdout, "%s is now %s of %s and signs in with the password given.\n", inv.Email, inv.Role, u.tenant)
	default:
		fmt.Fprintf(u.m.Stdout, "Invited %s as %s of %s. Send them this one-time link (after your server's address), valid until %s:\n%s%s\n",
			inv.Email, inv.Role, u.tenant, inv.ExpiresAt.Format("2006-01-02 15:04 MST"), api.InvitePath, inv.Token)
	}
	return nil
}

func (u userCommand) setPassword() error {
	password, err := passwordLine(u.m.Stdin)
	if err != nil {
		return err
	}
	usr, err := u.svc.Users().SetPassword(u.ctx, u.op, u.args[0], password)
	if err != nil {
		return err
	}
	fmt.Fprintf(u.m.Stdout, "Set the password of %s; their sessions ended and their invite links stopped working.\n", usr.Email)
	return nil
}

func (u userCommand) breakGlass() error {
	until, err := u.svc.SingleSignOn().BreakGlass(u.ctx, u.op, u.tenant, u.args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(u.m.Stdout, "%s may sign in to %s with their password until %s (UTC), single sign-on or not.\n"+
		"Set a new password first with parley user set-password if they have none.\n", u.args[0], u.tenant, until.UTC().Format("2006-01-02 15:04"))
	return nil
}

func (u userCommand) resetTwoFactor() error {
	if err := u.svc.TwoFactor().Reset(u.ctx, u.op, u.args[0]); err != nil {
		return err
	}
	fmt.Fprintf(u.m.Stdout, "Two-factor is off for %s; they sign in with their password (and enrol again where a tenant requires it).\n", u.args[0])
	return nil
}

func (u userCommand) setRole() error {
	mem, err := u.svc.Members().SetRole(u.ctx, u.op, u.tenant, u.args[0], u.args[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(u.m.Stdout, "%s is %s of %s.\n", mem.Email, mem.Role, u.tenant)
	return nil
}

func (u userCommand) remove() error {
	if err := u.svc.Members().Remove(u.ctx, u.op, u.tenant, u.args[0]); err != nil {
		return err
	}
	fmt.Fprintf(u.m.Stdout, "Removed %s from %s.\n", u.args[0], u.tenant)
	return nil
}

func (u userCommand) adminKey() error {
	k, err := u.svc.APIKeys().Create(u.ctx, u.op, u.tenant, platform.APIKeyInput{Name: u.name, Kind: auth.KindSecret, Scopes: []string{auth.ScopeAdmin}})
	if err != nil {
		return err
	}
	fmt.Fprintf(u.m.Stdout, "Admin API key %q of %s (shown this once; store it now):\n%s\n", k.Name, u.tenant, k.Key)
	return nil
}

// passwordLine reads a password from the first line of r, so it never shows
// in the process list or the shell's history.
func passwordLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("give the password on the first line of stdin, e.g. parley user set-password ada@example.com < pw.txt")
	}
	return line, nil
}
