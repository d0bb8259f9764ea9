// Package oidctest runs a real OpenID Connect provider for single sign-on
// tests: panva's oidc-provider from npm (.ci/install-oidc.sh), with one
// client and static accounts, on 127.0.0.1 at a free port. A test skips
// with a message when node or the package is missing; CI installs both
// (.ci/run insists).
package oidctest

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

//go:embed provider.mjs
var script []byte

// Account is what a login name at the provider claims.
type Account struct {
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
}

// Options configure the provider's one client and its accounts, by login
// name (any other login name claims an unverified address).
type Options struct {
	ClientID     string             `json:"client_id"`
	ClientSecret string             `json:"client_secret"`
	RedirectURIs []string           `json:"redirect_uris"`
	Accounts     map[string]Account `json:"accounts"`
}

// Provider is a running oidc-provider.
type Provider struct {
	// Issuer is its issuer URL, http://127.0.0.1:<port>.
	Issuer string
}

// Start runs the provider until the test ends, or skips the test when
// oidc-provider is not installed.
func Start(t testing.TB, o Options) *Provider {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping a single sign-on test against oidc-provider from npm")
	}
	modules := Modules()
	if modules == "" {
		t.Skip("oidc-provider from npm is not installed: run .ci/install-oidc.sh")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "provider.mjs")
	if err := os.WriteFile(path, script, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", path, modules, string(cfg))
	var stderr bytes.Buffer // the provider's own warnings and errors, shown when the test fails
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the script exits when its stdin ends
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("oidc-provider's stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("oidc-provider did not start: %v", err)
	}
	var out struct{ Issuer string }
	if err := json.Unmarshal(line, &out); err != nil || out.Issuer == "" {
		t.Fatalf("oidc-provider said %q, not its issuer", line)
	}
	return &Provider{Issuer: out.Issuer}
}

// Modules is the node_modules directory holding oidc-provider, found
// from the working directory up to the module root; "" when missing.
func Modules() string {
	wd, _ := os.Getwd()
	for {
		mods := filepath.Join(wd, ".ci", "oidc", "node_modules")
		if _, err := os.Stat(filepath.Join(mods, "oidc-provider", "package.json")); err == nil {
			return mods
		}
		if _, err := os.Stat(filepath.Join(wd, "go.mod")); err == nil {
			return ""
		}
		parent := filepath.Dir(wd)
		if parent == wd {
			return ""
		}
		wd = parent
	}
}
