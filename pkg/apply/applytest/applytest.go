// Package applytest holds what the tests of parley apply share, in
// pkg/apply (both targets) and cmd/parley (the command): a copy of the
// example tenants to edit, and the release files apply also makes true.
package applytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// GitopsDir is a copy of the example tenants (examples, the repository's
// tenants folder) with a secret named in acme-outdoor's tenant file; its
// value comes from ACME_CRM_TOKEN.
func GitopsDir(t *testing.T, examples string) string {
	t.Helper()
	dir := CopyTree(t, examples)
	WriteFile(t, filepath.Join(dir, "acme-outdoor", "tenant.json"), `{"name": "Acme Outdoor", "secrets": {"crm_token": "ACME_CRM_TOKEN"}}`)
	return dir
}

// ReleaseFiles writes the files beside the bots that apply also makes
// true: acme-outdoor's providers and webhooks, and support's release
// settings (passing tests required, a canary of an edited config).
func ReleaseFiles(t *testing.T, dir string) {
	t.Helper()
	acme := filepath.Join(dir, "acme-outdoor")
	WriteFile(t, filepath.Join(acme, "tenant.json"), `{"name": "Acme Outdoor", "secrets": {"crm_token": "ACME_CRM_TOKEN"},
 "bots": {"support": {"require_passing_tests": true, "canary": {"percent": 10}}}}`)
	cfg, err := os.ReadFile(filepath.Join(acme, "bots", "support.json"))
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(acme, "canary", "support.json"), string(WithGreeting(t, cfg, "Candidate greeting")))
	WriteFile(t, filepath.Join(acme, "providers.json"), `{
 "claude": {"kind": "anthropic", "api_key_env": "ACME_ANTHROPIC_KEY", "models": ["claude-sonnet-4-5"]},
 "local": {"kind": "openai", "base_url": "https://llm.acme.example/v1/", "headers": {"X-Team": "support"}}}`)
	WriteFile(t, filepath.Join(acme, "webhooks.json"), `{
 "crm": {"url": "http://127.0.0.1:9/crm", "description": "Acme's CRM", "events": ["dialog.created", "tool.failed"], "bot": "support", "secret_env": "ACME_CRM_WEBHOOK_SECRET"},
 "audit": {"url": "http://127.0.0.1:9/audit", "events": ["*"], "enabled": false}}`)
}

// ReleaseEnv sets the environment variables ReleaseFiles names.
func ReleaseEnv(env map[string]string) {
	env["ACME_CRM_TOKEN"] = "crm-secret-value"
	env["ACME_ANTHROPIC_KEY"] = "sk-ant-test-key"
	env["ACME_CRM_WEBHOOK_SECRET"] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
}

// CopyTree copies the folder from into a temporary one a test may edit.
func CopyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// WriteFile writes body to path, making its folders.
func WriteFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WithGreeting is config with its basic_settings.greeting set: a real
// change, which compiles to a new fingerprint.
func WithGreeting(t *testing.T, config []byte, greeting string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(config, &doc); err != nil {
		t.Fatal(err)
	}
	doc["basic_settings"].(map[string]any)["greeting"] = greeting
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
