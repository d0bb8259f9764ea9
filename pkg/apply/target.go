package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// Target is what parley apply writes to: the database through the
// platform (dbTarget) or a running server through its API (apiTarget). Both
// make the same calls, so both leave the same state.
type Target interface {
	// atomically runs fn with a target whose writes all commit when fn
	// returns nil and none does otherwise, when this target has
	// transactions (transactional); the API has none, and runs fn as is.
	atomically(ctx context.Context, fn func(Target) error) (transactional bool, err error)
	tenantExists(ctx context.Context, slug string) (bool, error)
	// createTenant returns the new tenant's id and first admin key.
	createTenant(ctx context.Context, slug, name string) (id, key string, err error)
	// retentionDays is the tenant's retention period (0: kept).
	retentionDays(ctx context.Context, tenant string) (int, error)
	setRetentionDays(ctx context.Context, tenant string, days int) error
	// idleMinutes is the tenant's idle period (docs/insights.md).
	idleMinutes(ctx context.Context, tenant string) (int, error)
	setIdleMinutes(ctx context.Context, tenant string, minutes int) error
	putSecret(ctx context.Context, tenant, name, value string) error
	secretNames(ctx context.Context, tenant string) ([]string, error)
	deleteSecret(ctx context.Context, tenant, name string) error
	// identity returns the tenant's identity settings; found is false when
	// it has none.
	identity(ctx context.Context, tenant string) (got identityFile, hasSecret, found bool, err error)
	putIdentity(ctx context.Context, tenant string, want identityFile) error
	// sso returns the tenant's single sign-on settings (secret "" and
	// hasSecret saying whether one is saved); found is false when none.
	sso(ctx context.Context, tenant string) (got ssoFile, hasSecret, found bool, err error)
	// putSSO saves them; secret "" keeps the saved one.
	putSSO(ctx context.Context, tenant string, want ssoFile, secret string) error
	requireTwoFactor(ctx context.Context, tenant string) (bool, error)
	setRequireTwoFactor(ctx context.Context, tenant string, on bool) error
	// liveBots returns the tenant's bots by slug, each with its live version.
	liveBots(ctx context.Context, tenant string) (map[string]liveBot, error)
	// createBot returns the number of the bot's first version.
	createBot(ctx context.Context, tenant, slug string, config, tests []byte) (int, error)
	// saveVersion returns the version's number and whether it is new (a
	// config and tests equal to the newest version's save nothing).
	saveVersion(ctx context.Context, tenant, slug string, config, tests []byte) (int, bool, error)
	publish(ctx context.Context, tenant, slug string, n int) error
	deleteBot(ctx context.Context, tenant, slug string) error
	// channels returns the tenant's channels, each with its bot's slug.
	channels(ctx context.Context, tenant string) ([]channelState, error)
	// createChannel makes the channel named name; secret is a webhook
	// channel's chosen whsec_ secret ("" generates one).
	createChannel(ctx context.Context, tenant, name string, c channelFile, secret string) (createdChannel, error)
	updateChannel(ctx context.Context, tenant, name string, c channelFile) error
	deleteChannel(ctx context.Context, tenant, name string) error
	setRequireTests(ctx context.Context, tenant, slug string, on bool) error
	setCanary(ctx context.Context, tenant, slug string, version, percent int) error
	dropCanary(ctx context.Context, tenant, slug string) error
	// providers returns the tenant's model providers by name.
	providers(ctx context.Context, tenant string) (map[string]liveProvider, error)
	putProvider(ctx context.Context, tenant, name string, p liveProvider) error
	deleteProvider(ctx context.Context, tenant, name string) error
	webhooks(ctx context.Context, tenant string) ([]liveWebhook, error)
	// createWebhook returns the endpoint's secret: the one it was given,
	// or the one generated for it.
	createWebhook(ctx context.Context, tenant string, w webhookSpec) (secret string, err error)
	updateWebhook(ctx context.Context, tenant, id string, c webhookChange) error
	deleteWebhook(ctx context.Context, tenant, id string) error
	members(ctx context.Context, tenant string) ([]liveMember, error)
	// inviteMember returns the one-time invite link of a person without
	// an account ("" when they had one and were added).
	inviteMember(ctx context.Context, tenant, email, role string) (string, error)
	setMemberRole(ctx context.Context, tenant, email, role string) error
	removeMember(ctx context.Context, tenant, email string) error
	knowledgeBases(ctx context.Context, tenant string) ([]liveBase, error)
	createKnowledgeBase(ctx context.Context, tenant string, b baseSpec) error
	renameKnowledgeBase(ctx context.Context, tenant, slug, name string) error
	deleteKnowledgeBase(ctx context.Context, tenant, slug string) error
	knowledgeSources(ctx context.Context, tenant, base string) ([]liveSource, error)
	// addKnowledgeSource adds s, with content when it is a document.
	addKnowledgeSource(ctx context.Context, tenant, base string, s sourceSpec, content []byte) error
	deleteKnowledgeSource(ctx context.Context, tenant, base, id string) error
}

// liveBot is a bot's settings and live version as apply compares them;
// published is 0 when none is live, canaryVersion 0 when no canary runs.
type liveBot struct {
	id            string
	published     int
	fingerprint   string
	config, tests []byte
	requireTests  bool

	canaryVersion, canaryPercent int
	canaryFingerprint            string
	canaryTests                  []byte
}

// Database is a target that applies through the platform service as the
// principal op (the operator, for parley apply), one transaction per
// tenant.
func Database(svc *platform.Service, op *platform.Principal) Target {
	return dbTarget{svc: svc, op: op}
}

// Server is a target that applies through a running server's API with
// the client's key.
func Server(c *apiclient.Client) Target { return apiTarget{c: c} }

// dbTarget applies to the database as the operator.
type dbTarget struct {
	svc *platform.Service
	op  *platform.Principal
}

func (d dbTarget) atomically(ctx context.Context, fn func(Target) error) (bool, error) {
	return true, d.svc.InTx(ctx, func(tx *platform.Service) error { return fn(dbTarget{svc: tx, op: d.op}) })
}

func (d dbTarget) tenantExists(ctx context.Context, slug string) (bool, error) {
	_, err := d.svc.Tenants().Get(ctx, d.op, slug)
	if platform.ErrorCode(err) == platform.CodeNotFound {
		return false, nil
	}
	return err == nil, err
}

func (d dbTarget) createTenant(ctx context.Context, slug, name string) (string, string, error) {
	t, key, err := d.svc.Tenants().Create(ctx, d.op, platform.CreateTenantInput{Slug: slug, Name: name})
	return t.ID, key.Key, err
}

func (d dbTarget) retentionDays(ctx context.Context, tenant string) (int, error) {
	t, err := d.svc.Tenants().Get(ctx, d.op, tenant)
	return t.RetentionDays, err
}

func (d dbTarget) setRetentionDays(ctx context.Context, tenant string, days int) error {
	_, err := d.svc.Tenants().Update(ctx, d.op, tenant, platform.UpdateTenantInput{RetentionDays: &days})
	return err
}

func (d dbTarget) idleMinutes(ctx context.Context, tenant string) (int, error) {
	t, err := d.svc.Tenants().Get(ctx, d.op, tenant)
	return t.IdleMinutes, err
}

func (d dbTarget) setIdleMinutes(ctx context.Context, tenant string, minutes int) error {
	_, err := d.svc.Tenants().Update(ctx, d.op, tenant, platform.UpdateTenantInput{IdleMinutes: &minutes})
	return err
}

func (d dbTarget) putSecret(ctx context.Context, tenant, name, value string) error {
	_, err := d.svc.Secrets().Put(ctx, d.op, tenant, name, value)
	return err
}

func (d dbTarget) secretNames(ctx context.Context, tenant string) ([]string, error) {
	list, err := d.svc.Secrets().ListNames(ctx, d.op, tenant)
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	return names, err
}

func (d dbTarget) deleteSecret(ctx context.Context, tenant, name string) error {
	return d.svc.Secrets().Delete(ctx, d.op, tenant, name)
}

func (d dbTarget) identity(ctx context.Context, tenant string) (identityFile, bool, bool, error) {
	got, err := d.svc.Identities().Get(ctx, d.op, tenant)
	if platform.ErrorCode(err) == platform.CodeNotFound {
		return identityFile{}, false, false, nil
	}
	return identityFile{JWKSURL: got.JWKSURL, Audience: got.Audience}, got.HasSecret, err == nil, err
}

func (d dbTarget) putIdentity(ctx context.Context, tenant string, want identityFile) error {
	_, err := d.svc.Identities().Put(ctx, d.op, tenant, platform.IdentityInput{JWKSURL: want.JWKSURL, Audience: want.Audience})
	return err
}

func (d dbTarget) liveBots(ctx context.Context, tenant string) (map[string]liveBot, error) {
	out := map[string]liveBot{}
	for cursor := ""; ; {
		bots, next, err := d.svc.Bots().List(ctx, d.op, tenant, platform.ListOptions{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, b := range bots {
			lb, err := readLiveBot(liveBot{id: b.ID, published: b.PublishedVersion, requireTests: b.RequirePassingTests,
				canaryVersion: b.CanaryVersion, canaryPercent: b.CanaryPercent},
				func(n int) (string, []byte, []byte, error) {
					v, err := d.svc.Versions().Get(ctx, d.op, tenant, b.Slug, n)
					return v.Fingerprint, v.Config, v.Tests, err
				})
			if err != nil {
				return nil, err
			}
			out[b.Slug] = lb
		}
		if cursor = next; cursor == "" {
			return out, nil
		}
	}
}

func (d dbTarget) createBot(ctx context.Context, tenant, slug string, config, tests []byte) (int, error) {
	_, v, err := d.svc.Bots().CreateWithTests(ctx, d.op, tenant, slug, config, tests)
	return v.Number, err
}

func (d dbTarget) saveVersion(ctx context.Context, tenant, slug string, config, tests []byte) (int, bool, error) {
	v, created, err := d.svc.Versions().CreateWithTests(ctx, d.op, tenant, slug, config, tests)
	return v.Number, created, err
}

func (d dbTarget) publish(ctx context.Context, tenant, slug string, n int) error {
	_, err := d.svc.Versions().Publish(ctx, d.op, tenant, slug, n)
	return err
}

func (d dbTarget) deleteBot(ctx context.Context, tenant, slug string) error {
	return d.svc.Bots().Delete(ctx, d.op, tenant, slug)
}

func (d dbTarget) members(ctx context.Context, tenant string) ([]liveMember, error) {
	ms, err := d.svc.Members().List(ctx, d.op, tenant)
	out := make([]liveMember, len(ms))
	for i, m := range ms {
		out[i] = liveMember{email: m.Email, role: m.Role}
	}
	return out, err
}

func (d dbTarget) inviteMember(ctx context.Context, tenant, email, role string) (string, error) {
	inv, err := d.svc.Members().Invite(ctx, d.op, tenant, email, role)
	if err != nil || inv.Token == "" {
		return "", err
	}
	return apiclient.InvitePath + inv.Token, nil
}

func (d dbTarget) setMemberRole(ctx context.Context, tenant, email, role string) error {
	_, err := d.svc.Members().SetRole(ctx, d.op, tenant, email, role)
	return err
}

func (d dbTarget) removeMember(ctx context.Context, tenant, email string) error {
	return d.svc.Members().Remove(ctx, d.op, tenant, email)
}

// apiTarget applies through a running server's API with a key.
type apiTarget struct{ c *apiclient.Client }

func (a apiTarget) atomically(_ context.Context, fn func(Target) error) (bool, error) {
	return false, fn(a)
}

// tenantExists answers through the API. A tenant's key is answered 404
// for every other tenant, existing or not, and only the platform token
// creates tenants: to any other credential a 404 means the tenant is out
// of its reach, never that it would be created.
func (a apiTarget) tenantExists(ctx context.Context, slug string) (bool, error) {
	_, err := a.c.GetTenant(ctx, slug)
	if apiStatus(err) != http.StatusNotFound {
		return err == nil, err
	}
	me, err := a.c.Me(ctx)
	if err != nil {
		return false, err
	}
	if me.Kind != "platform" {
		return false, fmt.Errorf("this key cannot see or manage tenant %s: a tenant's key reaches only its own tenant, and only the platform token creates tenants", slug)
	}
	return false, nil
}

func (a apiTarget) createTenant(ctx context.Context, slug, name string) (string, string, error) {
	out, err := a.c.CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: slug, Name: name})
	if err != nil {
		return "", "", err
	}
	return out.Tenant.ID, out.APIKey.Key, nil
}

func (a apiTarget) retentionDays(ctx context.Context, tenant string) (int, error) {
	t, err := a.c.GetTenant(ctx, tenant)
	if err != nil {
		return 0, err
	}
	return t.RetentionDays, nil
}

func (a apiTarget) setRetentionDays(ctx context.Context, tenant string, days int) error {
	return a.c.Do(ctx, http.MethodPatch, "/v1/tenants/"+tenant, apiclient.UpdateTenantRequest{RetentionDays: &days}, nil)
}

func (a apiTarget) idleMinutes(ctx context.Context, tenant string) (int, error) {
	t, err := a.c.GetTenant(ctx, tenant)
	if err != nil {
		return 0, err
	}
	return t.IdleMinutes, nil
}

func (a apiTarget) setIdleMinutes(ctx context.Context, tenant string, minutes int) error {
	return a.c.Do(ctx, http.MethodPatch, "/v1/tenants/"+tenant, apiclient.UpdateTenantRequest{IdleMinutes: &minutes}, nil)
}

func (a apiTarget) putSecret(ctx context.Context, tenant, name, value string) error {
	_, err := a.c.PutSecret(ctx, tenant, name, value)
	return err
}

func (a apiTarget) secretNames(ctx context.Context, tenant string) ([]string, error) {
	list, err := a.c.ListSecrets(ctx, tenant)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range list.Secrets {
		names = append(names, s.Name)
	}
	return names, nil
}

func (a apiTarget) deleteSecret(ctx context.Context, tenant, name string) error {
	return a.c.DeleteSecret(ctx, tenant, name)
}

func (a apiTarget) identity(ctx context.Context, tenant string) (identityFile, bool, bool, error) {
	got, err := a.c.GetIdentity(ctx, tenant)
	if apiStatus(err) == http.StatusNotFound {
		return identityFile{}, false, false, nil
	}
	if err != nil {
		return identityFile{}, false, false, err
	}
	return identityFile{JWKSURL: got.JWKSURL, Audience: got.Audience}, got.HasSecret, true, nil
}

func (a apiTarget) putIdentity(ctx context.Context, tenant string, want identityFile) error {
	_, err := a.c.PutIdentity(ctx, tenant, apiclient.PutIdentityRequest{JWKSURL: want.JWKSURL, Audience: want.Audience})
	return err
}

func (a apiTarget) liveBots(ctx context.Context, tenant string) (map[string]liveBot, error) {
	out := map[string]liveBot{}
	for cursor := ""; ; {
		list, err := a.c.ListBots(ctx, tenant, cursor)
		if err != nil {
			return nil, err
		}
		for _, b := range list.Bots {
			lb, err := readLiveBot(liveBot{id: b.ID, published: b.PublishedVersion, requireTests: b.RequirePassingTests,
				canaryVersion: b.CanaryVersion, canaryPercent: b.CanaryPercent},
				func(n int) (string, []byte, []byte, error) {
					v, err := a.c.GetVersion(ctx, tenant, b.Slug, n)
					if err != nil {
						return "", nil, nil, err
					}
					return v.Fingerprint, v.Config, v.Tests, nil
				})
			if err != nil {
				return nil, err
			}
			out[b.Slug] = lb
		}
		if cursor = list.NextCursor; cursor == "" {
			return out, nil
		}
	}
}

func (a apiTarget) createBot(ctx context.Context, tenant, slug string, config, tests []byte) (int, error) {
	var out apiclient.BotWithVersion
	req := apiclient.CreateBotRequest{Slug: slug, Config: config, Tests: json.RawMessage(tests)}
	if err := a.c.Do(ctx, http.MethodPost, "/v1/tenants/"+tenant+"/bots", req, &out); err != nil {
		return 0, err
	}
	return out.Version.Number, nil
}

func (a apiTarget) saveVersion(ctx context.Context, tenant, slug string, config, tests []byte) (int, bool, error) {
	// The API answers 201 for a new version and 200 for the same one; the
	// client returns the version either way, so compare with the newest.
	latest, err := a.latestVersion(ctx, tenant, slug)
	if err != nil {
		return 0, false, err
	}
	v, err := a.c.CreateVersionWithTests(ctx, tenant, slug, config, json.RawMessage(tests))
	if err != nil {
		return 0, false, err
	}
	return v.Number, v.Number > latest, nil
}

// latestVersion is the number of the bot's newest version.
func (a apiTarget) latestVersion(ctx context.Context, tenant, slug string) (int, error) {
	latest := 0
	for cursor := ""; ; {
		list, err := a.c.ListVersions(ctx, tenant, slug, cursor)
		if err != nil {
			return 0, err
		}
		for _, v := range list.Versions {
			latest = max(latest, v.Number)
		}
		if cursor = list.NextCursor; cursor == "" {
			return latest, nil
		}
	}
}

func (a apiTarget) publish(ctx context.Context, tenant, slug string, n int) error {
	_, err := a.c.Publish(ctx, tenant, slug, n)
	return err
}

func (a apiTarget) deleteBot(ctx context.Context, tenant, slug string) error {
	return a.c.DeleteBot(ctx, tenant, slug)
}

func (a apiTarget) members(ctx context.Context, tenant string) ([]liveMember, error) {
	list, err := a.c.ListMembers(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]liveMember, len(list.Members))
	for i, m := range list.Members {
		out[i] = liveMember{email: m.Email, role: m.Role}
	}
	return out, nil
}

func (a apiTarget) inviteMember(ctx context.Context, tenant, email, role string) (string, error) {
	inv, err := a.c.InviteMember(ctx, tenant, email, role)
	if err != nil {
		return "", err
	}
	return inv.InvitePath, nil
}

func (a apiTarget) setMemberRole(ctx context.Context, tenant, email, role string) error {
	_, err := a.c.SetMemberRole(ctx, tenant, email, role)
	return err
}

func (a apiTarget) removeMember(ctx context.Context, tenant, email string) error {
	return a.c.RemoveMember(ctx, tenant, email)
}

// apiStatus is the HTTP status of an API error, 0 for other errors.
func apiStatus(err error) int {
	var e *apiclient.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func (d dbTarget) channels(ctx context.Context, tenant string) ([]channelState, error) {
	list, err := d.svc.Channels().List(ctx, d.op, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]channelState, len(list))
	for i, c := range list {
		b, err := d.svc.Bots().Get(ctx, d.op, tenant, c.BotID)
		if err != nil {
			return nil, err
		}
		out[i] = channelState{name: c.Name, kind: c.Kind, bot: b.Slug, enabled: c.Enabled, secrets: c.Secrets, botUserID: c.BotUserID}
	}
	return out, nil
}

func (d dbTarget) createChannel(ctx context.Context, tenant, name string, c channelFile, secret string) (createdChannel, error) {
	ch, err := d.svc.Channels().Create(ctx, d.op, tenant, platform.ChannelInput{Kind: c.Kind, Bot: c.Bot, Name: name,
		Enabled: c.Enabled, Secrets: c.Secrets, BotUserID: c.BotUserID, Secret: secret})
	return createdChannel{id: ch.ID, secret: ch.Secret}, err
}

func (d dbTarget) updateChannel(ctx context.Context, tenant, name string, c channelFile) error {
	enabled, secrets := c.Enabled == nil || *c.Enabled, nonNilMap(c.Secrets)
	_, err := d.svc.Channels().Update(ctx, d.op, tenant, name, platform.ChannelPatch{Bot: &c.Bot, Enabled: &enabled,
		Secrets: &secrets, BotUserID: &c.BotUserID})
	return err
}

func (d dbTarget) deleteChannel(ctx context.Context, tenant, name string) error {
	return d.svc.Channels().Delete(ctx, d.op, tenant, name)
}

func (a apiTarget) channels(ctx context.Context, tenant string) ([]channelState, error) {
	list, err := a.c.ListChannels(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]channelState, len(list.Channels))
	for i, c := range list.Channels {
		b, err := a.c.GetBot(ctx, tenant, c.Bot)
		if err != nil {
			return nil, err
		}
		out[i] = channelState{name: c.Name, kind: c.Kind, bot: b.Slug, enabled: c.Enabled, secrets: c.Secrets, botUserID: c.BotUserID}
	}
	return out, nil
}

func (a apiTarget) createChannel(ctx context.Context, tenant, name string, c channelFile, secret string) (createdChannel, error) {
	ch, err := a.c.CreateChannel(ctx, tenant, apiclient.CreateChannelRequest{Kind: c.Kind, Bot: c.Bot, Name: name,
		Enabled: c.Enabled, Secrets: c.Secrets, BotUserID: c.BotUserID, Secret: secret})
	if err != nil {
		return createdChannel{}, err
	}
	return createdChannel{id: ch.ID, secret: ch.Secret}, nil
}

func (a apiTarget) updateChannel(ctx context.Context, tenant, name string, c channelFile) error {
	enabled, secrets := c.Enabled == nil || *c.Enabled, nonNilMap(c.Secrets)
	_, err := a.c.UpdateChannel(ctx, tenant, name, apiclient.UpdateChannelRequest{Bot: &c.Bot, Enabled: &enabled,
		Secrets: &secrets, BotUserID: &c.BotUserID})
	return err
}

func (a apiTarget) deleteChannel(ctx context.Context, tenant, name string) error {
	return a.c.DeleteChannel(ctx, tenant, name)
}
