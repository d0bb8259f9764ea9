package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/apply"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/platform"
)

// applyFlags are the flags of parley apply.
type applyFlags struct {
	server, key   string
	dryRun, prune bool
}

// apply makes a running Parley match a directory laid out like tenants/:
// `parley apply [--server URL --key KEY] [--dry-run] [--prune] DIR`. It works
// on the database directly, as the operator, or through the API of a
// running server with a key; pkg/apply does the work. Every file is
// checked before anything is written.
func (m *Main) apply(ctx context.Context, args []string) error {
	f, dir, err := m.parseApplyFlags(args)
	if err != nil || dir == "" {
		return err
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	tenants, problems := apply.ReadDir(dir, m.Getenv, configOptions(settings))
	for _, t := range tenants {
		for _, w := range t.Warnings {
			fmt.Fprintf(m.Stderr, "%s: %s: warning: %s\n", w.File, botconfig.DisplayPointer(w.Pointer), w.Message)
		}
	}
	if len(problems) > 0 {
		bad := map[string]bool{}
		for _, p := range problems {
			fmt.Fprintln(m.Stderr, p.String())
			bad[p.File] = true
		}
		fmt.Fprintf(m.Stderr, "%d file(s) have problems; nothing was applied.\n", len(bad))
		return exitError{code: 1}
	}
	target, closeTarget, err := m.applyTarget(ctx, f)
	if err != nil {
		return err
	}
	defer closeTarget()
	stats, err := apply.Run(ctx, target, tenants, apply.Options{Out: m.Stdout, Err: m.Stderr, DryRun: f.dryRun, Prune: f.prune})
	if err != nil {
		return err
	}
	if stats.Failed > 0 {
		return exitError{code: 1}
	}
	return nil
}

func (m *Main) parseApplyFlags(args []string) (applyFlags, string, error) {
	var f applyFlags
	fs := flag.NewFlagSet("parley apply", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.StringVar(&f.server, "server", "", "apply through the API of the server at URL instead of the database")
	fs.StringVar(&f.key, "key", "", "with --server: an sk_ admin key of the tenant, or the platform token (which may also create tenants)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "show what would change, with a diff per bot, and write nothing")
	fs.BoolVar(&f.prune, "prune", false, "also delete bots, secrets, named channels, providers, named webhooks, canaries, members (with a members.json) and knowledge bases and sources (with a knowledge/ directory) of the applied tenants that the directory no longer has")
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, `usage: parley apply [--server URL --key KEY] [--dry-run] [--prune] DIR

Makes Parley match DIR, laid out like tenants/:
  DIR/<tenant>/tenant.json          {"name": "...", "secrets"?: {"NAME": "ENV_VAR"}, "retention_days"?: N, "idle_minutes"?: N,
                                     "identity"?: {"jwks_url": "...", "audience"?: "..."},
                                     "sso"?: {"issuer": "...", "client_id": "...", "client_secret_env"?: "ENV_VAR",
                                              "default_role"?: "...", "allowed_domains"?: [...], "require_sso"?: B},
                                     "require_two_factor"?: B,
                                     "bots"?: {"<bot>": {"require_passing_tests"?: B, "canary"?: {"percent": N}}}}
  DIR/<tenant>/bots/<bot>.json      an agent config
  DIR/<tenant>/tests/<bot>.json     the bot's conversation tests (stored with its versions)
  DIR/<tenant>/channels/<name>.json {"kind": "webhook|telegram|slack", "bot": "...", "secrets"?: {"bot_token": "SECRET"},
                                     "enabled"?: true, "bot_user_id"?: "...", "secret_env"?: "ENV_VAR"}
  DIR/<tenant>/canary/<bot>.json    the candidate config of the bot's canary
  DIR/<tenant>/providers.json       {"<name>": {"kind": "openai|anthropic", "base_url"?, "api_key_env"?, "headers"?, "models"?}}
  DIR/<tenant>/webhooks.json        {"<name>": {"url", "events", "bot"?, "enabled"?, "secret_env"?}}
  DIR/<tenant>/members.json         {"members": [{"email": "...", "role": "owner|admin|editor|operator|viewer"}]}
  DIR/<tenant>/knowledge/<kb>/      a knowledge base: its documents (PDF, DOCX, HTML, Markdown, text, CSV/JSONL Q&A),
                                     knowledge.json {"name"?, "embedding"?: {"provider", "model"}, "files"?: {"<file>": {"title"?, "tags"?}}}
                                     and sources.json {"sources": [{"url"|"sitemap": "...", "tags"?, "refresh"?: "24h"}]}
DIR may also be one tenant's directory. Secret values come from the named
environment variables, never from files. Every file is checked first: when
any has a problem, each is reported and nothing is applied. A bot whose
config or tests differ from its live version gets a new version, published.
On the database each tenant applies in one transaction.`)
		fs.PrintDefaults()
	}
	pos, helped, err := parseArgs(fs, args, 1)
	if helped || err != nil {
		return f, "", err
	}
	if (f.server == "") != (f.key == "") {
		fmt.Fprintln(m.Stderr, "parley apply: --server and --key go together")
		return f, "", errUsage
	}
	return f, pos[0], nil
}

// applyTarget is the database (as the operator) or, with --server, the API.
func (m *Main) applyTarget(ctx context.Context, f applyFlags) (apply.Target, func(), error) {
	if f.server != "" {
		return apply.Server(apiclient.New(strings.TrimSuffix(f.server, "/"), f.key)), func() {}, nil
	}
	d, err := m.openData(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	return apply.Database(d.platform, platform.Operator()), func() { d.Close() }, nil
}
