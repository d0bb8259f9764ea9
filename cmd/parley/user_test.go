package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/platform"
)

// runParleyIn is runParley with stdin.
func runParleyIn(t *testing.T, env parleyEnv, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: env.getenv}
	code = m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestUserCommandsManageMembersAndRecoverAnAdminKey(t *testing.T) {
	t.Parallel()
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}
	if code, _, stderr := runParley(t, env, "tenant", "create", "acme"); code != 0 {
		t.Fatal(stderr)
	}
	ok := func(t *testing.T, stdin string, args ...string) string {
		t.Helper()
		code, stdout, stderr := runParleyIn(t, env, stdin, args...)
		if code != 0 {
			t.Fatalf("parley %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		return stdout
	}
	t.Run("add without a password prints a one-time invite link", func(t *testing.T) {
		out := ok(t, "", "user", "add", "--tenant", "acme", "--role", "editor", "eve@example.com")
		if !regexp.MustCompile(`(?m)^/admin/#/invite/inv_\w+$`).MatchString(out) {
			t.Fatalf("no invite link in:\n%s", out)
		}
		if list := ok(t, "", "user", "list", "--tenant", "acme"); !regexp.MustCompile(`eve@example.com\s+pending\s+acme:editor`).MatchString(list) {
			t.Fatalf("list:\n%s", list)
		}
	})
	t.Run("set-password reads stdin, and the user signs in with it", func(t *testing.T) {
		ok(t, "plum tractor velvet\n", "user", "set-password", "eve@example.com")
		d, err := (&Main{Getenv: env.getenv}).openData(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.platform.Auth().Login(context.Background(), "eve@example.com", "plum tractor velvet"); err != nil {
			t.Fatalf("login with the new password: %v", err)
		}
	})
	t.Run("a common password is refused", func(t *testing.T) {
		code, _, stderr := runParleyIn(t, env, "password1234\n", "user", "set-password", "eve@example.com")
		if code != 1 || !strings.Contains(stderr, "common") {
			t.Fatalf("exit %d, %s; want 1 and why", code, stderr)
		}
	})
	t.Run("the last owner is neither demoted nor removed", func(t *testing.T) {
		ok(t, "plum tractor velvet\n", "user", "add", "--tenant", "acme", "--role", "owner", "--password-stdin", "ada@example.com")
		for _, args := range [][]string{
			{"user", "set-role", "--tenant", "acme", "ada@example.com", "admin"},
			{"user", "remove", "--tenant", "acme", "ada@example.com"},
		} {
			code, _, stderr := runParley(t, env, args...)
			if code != 1 || !strings.Contains(stderr, "last owner") {
				t.Fatalf("parley %s: exit %d, %s; want 1 and the last-owner rule", strings.Join(args, " "), code, stderr)
			}
		}
	})
	t.Run("set-role and remove change a member", func(t *testing.T) {
		ok(t, "", "user", "set-role", "--tenant", "acme", "eve@example.com", "viewer")
		ok(t, "", "user", "remove", "--tenant", "acme", "eve@example.com")
		if list := ok(t, "", "user", "list", "--tenant", "acme"); strings.Contains(list, "eve@") {
			t.Fatalf("eve still listed:\n%s", list)
		}
	})
	t.Run("admin-key prints a working admin key once", func(t *testing.T) {
		out := ok(t, "", "user", "admin-key", "--tenant", "acme")
		key := regexp.MustCompile(`(?m)^sk_\w+$`).FindString(out)
		if key == "" {
			t.Fatalf("no key in:\n%s", out)
		}
		d, err := (&Main{Getenv: env.getenv}).openData(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		p, err := d.platform.Auth().Authenticate(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.platform.Members().List(context.Background(), p, "acme"); err != nil {
			t.Fatalf("the key cannot act as admin: %v", err)
		}
	})
	t.Run("break-glass lets an owner use a password where the tenant requires single sign-on", func(t *testing.T) {
		ctx := context.Background()
		d, err := (&Main{Getenv: env.getenv}).openData(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.platform.SingleSignOn().PutSSO(ctx, platform.Operator(), "acme", platform.SSOInput{Issuer: "https://93.184.215.14",
			ClientID: "parley", RequireSSO: true}); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runParley(t, env, "user", "break-glass", "--tenant", "acme", "eve@example.com"); code != 1 || !strings.Contains(stderr, "not an owner") {
			t.Fatalf("break-glass for someone who is not an owner: exit %d, %s", code, stderr)
		}
		ok(t, "", "user", "add", "--tenant", "acme", "--role", "owner", "eve@example.com")
		if _, err := d.platform.Auth().Login(ctx, "eve@example.com", "plum tractor velvet"); platform.ErrorCode(err) != platform.CodeForbidden {
			t.Fatalf("password sign-in of an owner where SSO is required: %v, want forbidden", err)
		}
		if out := ok(t, "", "user", "break-glass", "--tenant", "acme", "eve@example.com"); !strings.Contains(out, "may sign in to acme with their password until") {
			t.Fatalf("break-glass said:\n%s", out)
		}
		if _, err := d.platform.Auth().Login(ctx, "eve@example.com", "plum tractor velvet"); err != nil {
			t.Fatalf("password sign-in after break-glass: %v", err)
		}
	})
	t.Run("reset-two-factor lets someone who lost their authenticator sign in with the password again", func(t *testing.T) {
		ctx := context.Background()
		d, err := (&Main{Getenv: env.getenv}).openData(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		in, err := d.platform.Auth().Login(ctx, "eve@example.com", "plum tractor velvet")
		if err != nil || in.SecondStep != nil {
			t.Fatalf("login: %v", err)
		}
		p, err := d.platform.Auth().Authenticate(ctx, in.Token)
		if err != nil {
			t.Fatal(err)
		}
		e, err := d.platform.TwoFactor().StartEnrolment(ctx, p, "")
		if err != nil {
			t.Fatal(err)
		}
		code, _ := platform.TOTPCode(e.Secret, time.Now())
		if _, err := d.platform.TwoFactor().Confirm(ctx, p, "", code, ""); err != nil {
			t.Fatal(err)
		}
		if in, err := d.platform.Auth().Login(ctx, "eve@example.com", "plum tractor velvet"); err != nil || in.SecondStep == nil {
			t.Fatalf("with two-factor on, a password alone: %+v, %v", in.SecondStep, err)
		}
		if out := ok(t, "", "user", "reset-two-factor", "eve@example.com"); !strings.Contains(out, "Two-factor is off for eve@example.com") {
			t.Fatalf("reset said:\n%s", out)
		}
		if in, err := d.platform.Auth().Login(ctx, "eve@example.com", "plum tractor velvet"); err != nil || in.SecondStep != nil {
			t.Fatalf("after the reset: %+v, %v; want a session", in.SecondStep, err)
		}
	})
	t.Run("a command without --tenant is a usage error", func(t *testing.T) {
		if code, _, _ := runParley(t, env, "user", "remove", "eve@example.com"); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
	})
}
