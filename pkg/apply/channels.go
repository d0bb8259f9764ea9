package apply

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/webhook"
)

// channelFile is tenants/<slug>/channels/<name>.json: an inbound channel,
// named after its file. Platform credentials are tenant secrets named by
// role; a webhook channel's own whsec_ secret may come from an
// environment variable, so it never lives in git.
type channelFile struct {
	Kind string `json:"kind"`
	// Bot is the answering bot's slug.
	Bot       string            `json:"bot"`
	Enabled   *bool             `json:"enabled,omitempty"`
	Secrets   map[string]string `json:"secrets,omitempty"`
	BotUserID string            `json:"bot_user_id,omitempty"`
	// SecretEnv names the environment variable holding a webhook
	// channel's whsec_ secret, used when the channel is created; without
	// it Parley generates one and apply prints it once.
	SecretEnv string `json:"secret_env,omitempty"`
}

// channelSpec is one checked channel file.
type channelSpec struct {
	file, name string
	want       channelFile
	// secret is SecretEnv's value.
	secret string
}

// channelState is a channel as a target reports it, in a file's terms.
type channelState struct {
	name, kind, bot string
	enabled         bool
	secrets         map[string]string
	botUserID       string
}

// readChannels reads and checks a tenant directory's channels/*.json.
func readChannels(dir string, getenv func(string) string) ([]channelSpec, []Problem) {
	files, _ := filepath.Glob(filepath.Join(dir, "channels", "*.json"))
	sort.Strings(files)
	var specs []channelSpec
	var ps []Problem
	for _, f := range files {
		c := channelSpec{file: f, name: strings.TrimSuffix(filepath.Base(f), ".json")}
		if !platform.ValidSlug(c.name) {
			ps = append(ps, Problem{f, "-", "the file name is the channel's name: 1-63 lowercase letters, digits or hyphens"})
		}
		if err := readStrictJSON(f, &c.want); err != nil {
			ps = append(ps, Problem{f, "-", strings.Replace(err.Error(), "tenant file", "channel file", 1)})
			continue
		}
		if !slices.Contains(channel.Kinds, c.want.Kind) {
			ps = append(ps, Problem{f, "/kind", "must be one of " + strings.Join(channel.Kinds, ", ")})
		}
		if c.want.Bot == "" {
			ps = append(ps, Problem{f, "/bot", "name the bot that answers (its slug)"})
		}
		for _, role := range sortedKeys(c.want.Secrets) {
			if !platform.ValidSecretName(c.want.Secrets[role]) {
				ps = append(ps, Problem{f, "/secrets/" + role, "name a tenant secret (letters, digits and _); its value comes from tenant.json's environment variable"})
			}
		}
		if env := c.want.SecretEnv; env != "" {
			c.secret = getenv(env)
			switch {
			case c.want.Kind != channel.KindWebhook:
				ps = append(ps, Problem{f, "/secret_env", "only a webhook channel takes its secret from the environment"})
			case c.secret == "":
				ps = append(ps, Problem{f, "/secret_env", fmt.Sprintf("environment variable %s is not set", env)})
			default:
				if _, err := webhook.SecretKey(c.secret); err != nil {
					ps = append(ps, Problem{f, "/secret_env", fmt.Sprintf("environment variable %s %s", env, err.Error())})
				}
			}
		}
		specs = append(specs, c)
	}
	return specs, ps
}

// channels applies each channel file: creates the missing ones (printing
// a generated secret once), updates those whose bot, secrets, bot user or
// enabled differ, and with --prune deletes the tenant's other channels.
func (a *applier) channels(ctx context.Context, t Tenant, exists bool) {
	live := map[string]channelState{}
	if exists {
		states, err := a.target.channels(ctx, t.slug)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		for _, s := range states {
			live[s.name] = s
		}
	}
	for _, c := range t.channels {
		cur, ok := live[c.name]
		a.channel(ctx, t.slug, c, cur, ok)
	}
	if !a.prune {
		return
	}
	for _, name := range sortedKeys(live) {
		if name != "" && !slices.ContainsFunc(t.channels, func(c channelSpec) bool { return c.name == name }) {
			a.remove(t.file, "channel "+name, func() error { return a.target.deleteChannel(ctx, t.slug, name) })
		}
	}
}

func (a *applier) channel(ctx context.Context, tenant string, c channelSpec, live channelState, exists bool) {
	enabled := c.want.Enabled == nil || *c.want.Enabled
	switch {
	case exists && live.kind != c.want.Kind:
		a.fail(c.file, fmt.Errorf("the channel is a %s channel; a kind cannot change: delete it (or apply with --prune after renaming the file)", live.kind))
	case exists && live.bot == c.want.Bot && live.enabled == enabled && live.botUserID == c.want.BotUserID &&
		maps.Equal(live.secrets, nonNilMap(c.want.Secrets)):
		fmt.Fprintf(a.out, "  channel %s: unchanged\n", c.name)
	case a.dryRun && exists:
		fmt.Fprintf(a.out, "  channel %s: would be updated\n", c.name)
	case a.dryRun:
		fmt.Fprintf(a.out, "  channel %s: would be created (%s, bot %s)\n", c.name, c.want.Kind, c.want.Bot)
	case exists:
		if err := a.target.updateChannel(ctx, tenant, c.name, c.want); err != nil {
			a.fail(c.file, err)
			return
		}
		fmt.Fprintf(a.out, "  channel %s: updated\n", c.name)
	default:
		created, err := a.target.createChannel(ctx, tenant, c.name, c.want, c.secret)
		if err != nil {
			a.fail(c.file, err)
			return
		}
		fmt.Fprintf(a.out, "  channel %s: created, inbound path %s\n", c.name, platform.InboundPath(created.id))
		if created.secret != "" && c.secret == "" {
			fmt.Fprintf(a.out, "    %s (shown this once; store it now): %s\n", secretLabel(c.want.Kind), created.secret)
		}
	}
}

// createdChannel is what creating a channel answers: its id and the
// secret Parley made for it.
type createdChannel struct{ id, secret string }

func secretLabel(kind string) string {
	if kind == channel.KindTelegram {
		return "secret token (for setWebhook)"
	}
	return "signing secret"
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
