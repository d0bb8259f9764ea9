package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/webhook"
)

// webhooksFileName is the tenant directory's file of webhook endpoints.
const webhooksFileName = "webhooks.json"

// webhookFile is one endpoint of webhooks.json, which maps endpoint names
// to endpoints. The name is the endpoint's stable key: apply finds the
// live endpoint by it, so a URL can change without losing the endpoint's
// secret and delivery log.
type webhookFile struct {
	URL string `json:"url"`
	// Description says what the receiver is (shown in the admin UI).
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events"`
	// Bot limits the endpoint to one bot of the directory (its slug).
	Bot string `json:"bot,omitempty"`
	// Enabled, when set, is applied; absent leaves the endpoint as it is
	// (Parley disables endpoints that answer 410 or keep failing).
	Enabled *bool `json:"enabled,omitempty"`
	// SecretEnv names the environment variable holding the whsec_ secret
	// the endpoint is created with; without it one is generated and
	// printed once.
	SecretEnv string `json:"secret_env,omitempty"`
}

// webhookSpec is one checked endpoint.
type webhookSpec struct {
	name string
	webhookFile
	secret string
}

// liveWebhook is an endpoint as apply compares it.
type liveWebhook struct {
	id, name, url, description string
	events                     []string
	botID                      string
	enabled                    bool
}

// webhookChange is the fields of an endpoint apply changes; nil stays.
type webhookChange struct {
	url         *string
	description *string
	events      *[]string
	bot         *string
	enabled     *bool
}

func (c webhookChange) empty() bool {
	return c.url == nil && c.description == nil && c.events == nil && c.bot == nil && c.enabled == nil
}

// fields names what the change sets, for the output.
func (c webhookChange) fields() string {
	var f []string
	for name, set := range map[string]bool{"url": c.url != nil, "description": c.description != nil, "events": c.events != nil, "bot": c.bot != nil, "enabled": c.enabled != nil} {
		if set {
			f = append(f, name)
		}
	}
	slices.Sort(f)
	return strings.Join(f, ", ")
}

// readWebhooks reads and checks dir's webhooks.json, when there is one:
// names, URLs, event types, bots (which must be the directory's) and the
// secrets' environment variables.
func readWebhooks(dir string, getenv func(string) string, bots map[string]bool) ([]webhookSpec, []Problem) {
	file, ps := readKeyedFile[webhookFile](filepath.Join(dir, webhooksFileName))
	var specs []webhookSpec
	for _, name := range sortedKeys(file) {
		w, at := webhookSpec{name: name, webhookFile: file[name]}, "/"+name
		if !platform.ValidSlug(name) {
			ps.add(at, "an endpoint's name is its key: 1-63 lowercase letters, digits or hyphens")
		}
		if !strings.HasPrefix(w.URL, "https://") && !strings.HasPrefix(w.URL, "http://") {
			ps.add(at+"/url", "must be an absolute http or https URL")
		}
		if len(w.Description) > platform.MaxWebhookDescription {
			ps.add(at+"/description", "must be at most %d bytes", platform.MaxWebhookDescription)
		}
		if len(w.Events) == 0 {
			ps.add(at+"/events", "name at least one event type, or \"*\" for all")
		}
		for i, e := range w.Events {
			if !webhook.Known(e) {
				ps.add(fmt.Sprintf("%s/events/%d", at, i), "%q is not an event type; types: %s", e, strings.Join(webhook.Types, ", "))
			}
		}
		if w.Bot != "" && !bots[w.Bot] {
			ps.add(at+"/bot", "%q is not a bot of this directory (bots/%s.json)", w.Bot, w.Bot)
		}
		if w.SecretEnv != "" {
			w.secret = getenv(w.SecretEnv)
			if w.secret == "" {
				ps.add(at+"/secret_env", "environment variable %s is not set", w.SecretEnv)
			} else if _, err := webhook.SecretKey(w.secret); err != nil {
				ps.add(at+"/secret_env", "$%s is not a webhook secret: %v", w.SecretEnv, err)
			}
		}
		specs = append(specs, w)
	}
	return specs, ps.ps
}

// webhooks makes the tenant's named endpoints match webhooks.json: it
// creates the missing ones (printing a generated secret once), updates
// those that differ and, with --prune, deletes named endpoints the file
// does not have. Endpoints without a name were made by hand and are left
// alone. A secret is never changed here: rotate it through the API.
func (a *applier) webhooks(ctx context.Context, t Tenant, exists bool) {
	if len(t.webhooks) == 0 && !a.prune {
		return
	}
	live := map[string]liveWebhook{}
	if exists {
		list, err := a.target.webhooks(ctx, t.slug)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		for _, w := range list {
			if w.name != "" {
				live[w.name] = w
			}
		}
	}
	botIDs, err := a.botIDs(ctx, t, exists)
	if err != nil {
		a.fail(t.file, err)
		return
	}
	file := filepath.Join(filepath.Dir(t.file), webhooksFileName)
	for _, w := range t.webhooks {
		cur, ok := live[w.name]
		if !ok {
			a.createWebhook(ctx, t.slug, file, w)
			continue
		}
		change := webhookDiff(cur, w, botIDs)
		switch {
		case change.empty():
			fmt.Fprintf(a.out, "  webhook %s: unchanged\n", w.name)
		case a.dryRun:
			a.stats.Changed++
			fmt.Fprintf(a.out, "  webhook %s: would change %s\n", w.name, change.fields())
		default:
			if err := a.target.updateWebhook(ctx, t.slug, cur.id, change); err != nil {
				a.fail(file, err)
				continue
			}
			a.stats.Changed++
			fmt.Fprintf(a.out, "  webhook %s: changed %s\n", w.name, change.fields())
		}
	}
	if !a.prune {
		return
	}
	for _, name := range sortedKeys(live) {
		if !slices.ContainsFunc(t.webhooks, func(w webhookSpec) bool { return w.name == name }) {
			id := live[name].id
			a.remove(t.file, "webhook "+name, func() error { return a.target.deleteWebhook(ctx, t.slug, id) })
		}
	}
}

// botIDs maps the tenant's bot slugs to ids, for comparing endpoints'
// bot filters, when any endpoint of the directory has one.
func (a *applier) botIDs(ctx context.Context, t Tenant, exists bool) (map[string]string, error) {
	ids := map[string]string{}
	if !exists || !slices.ContainsFunc(t.webhooks, func(w webhookSpec) bool { return w.Bot != "" }) {
		return ids, nil
	}
	live, err := a.target.liveBots(ctx, t.slug)
	for slug, b := range live {
		ids[slug] = b.id
	}
	return ids, err
}

// webhookDiff is what must change for cur to match w.
func webhookDiff(cur liveWebhook, w webhookSpec, botIDs map[string]string) webhookChange {
	var c webhookChange
	if cur.url != w.URL {
		c.url = &w.URL
	}
	if cur.description != w.Description {
		c.description = &w.Description
	}
	if !slices.Equal(cur.events, w.Events) {
		c.events = &w.Events
	}
	if cur.botID != botIDs[w.Bot] || (w.Bot != "" && cur.botID == "") {
		c.bot = &w.Bot
	}
	if w.Enabled != nil && *w.Enabled != cur.enabled {
		c.enabled = w.Enabled
	}
	return c
}

func (a *applier) createWebhook(ctx context.Context, tenant, file string, w webhookSpec) {
	if a.dryRun {
		a.stats.Changed++
		fmt.Fprintf(a.out, "  webhook %s: would be created (%s)\n", w.name, w.URL)
		return
	}
	secret, err := a.target.createWebhook(ctx, tenant, w)
	if err != nil {
		a.fail(file, err)
		return
	}
	a.stats.Changed++
	if w.SecretEnv != "" {
		fmt.Fprintf(a.out, "  webhook %s: created, signing with the secret in $%s\n", w.name, w.SecretEnv)
		return
	}
	fmt.Fprintf(a.out, "  webhook %s: created\n    signing secret (shown this once; give it to the receiver now): %s\n", w.name, secret)
}

func (d dbTarget) webhooks(ctx context.Context, tenant string) ([]liveWebhook, error) {
	list, err := d.svc.Webhooks().List(ctx, d.op, tenant)
	return mapSlice(list, func(w platform.Webhook) liveWebhook {
		return liveWebhook{id: w.ID, name: w.Name, url: w.URL, description: w.Description, events: w.Events, botID: w.Bot, enabled: w.Enabled}
	}), err
}

func (d dbTarget) createWebhook(ctx context.Context, tenant string, w webhookSpec) (string, error) {
	out, err := d.svc.Webhooks().Create(ctx, d.op, tenant, platform.WebhookInput{Name: w.name, URL: w.URL, Description: w.Description, Events: w.Events,
		Bot: w.Bot, Enabled: w.Enabled, Secret: w.secret})
	return out.Secret, err
}

func (d dbTarget) updateWebhook(ctx context.Context, tenant, id string, c webhookChange) error {
	_, err := d.svc.Webhooks().Update(ctx, d.op, tenant, id, platform.WebhookPatch{URL: c.url, Description: c.description, Events: c.events, Bot: c.bot, Enabled: c.enabled})
	return err
}

func (d dbTarget) deleteWebhook(ctx context.Context, tenant, id string) error {
	return d.svc.Webhooks().Delete(ctx, d.op, tenant, id)
}

func (a apiTarget) webhooks(ctx context.Context, tenant string) ([]liveWebhook, error) {
	list, err := a.c.ListWebhooks(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return mapSlice(list.Webhooks, func(w apiclient.Webhook) liveWebhook {
		return liveWebhook{id: w.ID, name: w.Name, url: w.URL, description: w.Description, events: w.Events, botID: w.Bot, enabled: w.Enabled}
	}), nil
}

func (a apiTarget) createWebhook(ctx context.Context, tenant string, w webhookSpec) (string, error) {
	out, err := a.c.CreateWebhook(ctx, tenant, apiclient.CreateWebhookRequest{Name: w.name, URL: w.URL, Description: w.Description, Events: w.Events,
		Bot: w.Bot, Enabled: w.Enabled, Secret: w.secret})
	if err != nil {
		return "", err
	}
	return out.Secret, nil
}

func (a apiTarget) updateWebhook(ctx context.Context, tenant, id string, c webhookChange) error {
	_, err := a.c.UpdateWebhook(ctx, tenant, id, apiclient.UpdateWebhookRequest{URL: c.url, Description: c.description, Events: c.events, Bot: c.bot, Enabled: c.enabled})
	return err
}

func (a apiTarget) deleteWebhook(ctx context.Context, tenant, id string) error {
	return a.c.DeleteWebhook(ctx, tenant, id)
}

// mapSlice applies f to each element of in.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
