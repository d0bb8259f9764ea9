package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Channels is a tenant's channels (Telegram, Slack, webhook): reach it with Service.Channels().
type Channels struct{ svc *Service }

// Channels returns a tenant's channels (Telegram, Slack, webhook).
func (s *Service) Channels() Channels { return Channels{s} }

// The roles of the tenant secrets a channel names in its Secrets.
const (
	// ChannelBotToken is a Telegram or Slack bot token (xoxb-...).
	ChannelBotToken = "bot_token"
	// ChannelSigningSecret is a Slack app's signing secret.
	ChannelSigningSecret = "signing_secret"
)

// channelSecrets are the secret roles each kind requires.
var channelSecrets = map[string][]string{
	channel.KindWebhook:  nil,
	channel.KindTelegram: {ChannelBotToken},
	channel.KindSlack:    {ChannelBotToken, ChannelSigningSecret},
}

// Channel is an inbound channel as callers see it: never a secret's value.
type Channel struct {
	ID   string
	Name string
	Kind string
	// BotID is the bot answering the channel's messages.
	BotID   string
	Enabled bool
	// Secrets names the tenant secrets the channel uses, by role
	// (ChannelBotToken, ChannelSigningSecret).
	Secrets map[string]string
	// BotUserID is a Slack bot's own user id, whose messages are ignored
	// (Slack's authorizations name it too).
	BotUserID string
	// InboundPath is where the platform sends messages, on this server.
	InboundPath string
	// PreviousSecretExpiresAt is set during a rotation's overlap, while
	// the previous secret is still accepted.
	PreviousSecretExpiresAt *time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// CreatedChannel is a new channel with the secret Parley made for it,
// shown this once: a webhook channel's whsec_ signing secret, or a
// Telegram channel's secret token (setWebhook's secret_token).
type CreatedChannel struct {
	Channel
	Secret string
}

// ChannelInput is a new channel.
type ChannelInput struct {
	Kind      string
	Bot       string
	Name      string
	Enabled   *bool
	Secrets   map[string]string
	BotUserID string
	// Secret is a whsec_ secret the caller chose for a webhook channel
	// (parley apply); empty generates one.
	Secret string
}

// ChannelPatch changes the fields that are set.
type ChannelPatch struct {
	Bot       *string
	Enabled   *bool
	Secrets   *map[string]string
	BotUserID *string
}

// InboundPath is the public route a channel's platform posts to.
func InboundPath(id string) string { return "/v1/channels/" + id + "/inbound" }

func channelView(c *store.Channel) Channel {
	var cfg channelConfig
	_ = json.Unmarshal([]byte(c.Config), &cfg)
	if cfg.Secrets == nil {
		cfg.Secrets = map[string]string{}
	}
	out := Channel{ID: c.ID, Name: c.Name, Kind: c.Kind, BotID: c.BotID, Enabled: c.Enabled, Secrets: cfg.Secrets,
		BotUserID: cfg.BotUserID, InboundPath: InboundPath(c.ID), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.PrevExpiresAt != nil && c.PrevExpiresAt.After(time.Now()) {
		out.PreviousSecretExpiresAt = c.PrevExpiresAt
	}
	return out
}

// Create adds a channel bound to a bot and returns it with the
// secret Parley made for it, which is never shown again.
func (ch Channels) Create(ctx context.Context, p *Principal, tenant string, in ChannelInput) (CreatedChannel, error) {
	s := ch.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjChannels, auth.ActWrite)
	if err != nil {
		return CreatedChannel{}, err
	}
	var ps problems
	if in.Name != "" {
		ps.slug("/name", in.Name)
	}
	required, known := channelSecrets[in.Kind]
	if !known {
		ps.add("/kind", "must be one of %s", strings.Join(channel.Kinds, ", "))
	}
	botID := s.Channels().channelBot(ctx, &ps, t.ID, in.Bot)
	checkChannelSecrets(&ps, in.Secrets, required)
	secret, err := s.Channels().newChannelSecret(&ps, in.Kind, in.Secret)
	if err != nil {
		return CreatedChannel{}, s.internal(ctx, "channel secret", err)
	}
	if err := ps.err(); err != nil {
		return CreatedChannel{}, err
	}
	cfg, _ := json.Marshal(channelConfig{Secrets: in.Secrets, BotUserID: in.BotUserID})
	c := store.Channel{ID: store.NewID(store.PrefixChannel), TenantID: t.ID, BotID: botID, Kind: in.Kind, Name: in.Name,
		Enabled: in.Enabled == nil || *in.Enabled, Config: string(cfg)}
	if c.SecretNonce, c.SecretCipher, err = s.Channels().sealChannelSecret(&c, secret); err != nil {
		return CreatedChannel{}, err
	}
	if err := s.store.Tenant(c.TenantID).Channels().Create(ctx, &c); err != nil {
		return CreatedChannel{}, s.storeErr(ctx, "create channel", "channel", "a channel named "+in.Name+" already exists", err)
	}
	return CreatedChannel{Channel: channelView(&c), Secret: secret}, nil
}

// newChannelSecret makes the channel's own secret: a webhook channel's
// whsec_ (or the caller's, checked), a Telegram channel's secret token.
// Slack channels verify with the app's signing secret and have none.
func (c Channels) newChannelSecret(ps *problems, kind, chosen string) (string, error) {
	if chosen != "" && kind != channel.KindWebhook {
		ps.add("/secret", "only a webhook channel takes a chosen secret")
		return "", nil
	}
	switch kind {
	case channel.KindWebhook:
		if chosen == "" {
			return webhook.NewSecret()
		}
		if _, err := webhook.SecretKey(chosen); err != nil {
			ps.add("/secret", "%s", err.Error())
		}
		return chosen, nil
	case channel.KindTelegram:
		return channel.NewTelegramSecret()
	}
	return "", nil
}

// checkChannelSecrets wants a tenant secret name for every role the kind
// requires, and no other role.
func checkChannelSecrets(ps *problems, secrets map[string]string, required []string) {
	for _, role := range required {
		if secrets[role] == "" {
			ps.add("/secrets/"+role, "must name the tenant secret holding the %s", strings.ReplaceAll(role, "_", " "))
		}
	}
	roles := make([]string, 0, len(secrets))
	for role := range secrets {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	for _, role := range roles {
		if !slices.Contains(required, role) {
			ps.add("/secrets/"+role, "is not a secret this kind of channel uses")
		} else if secrets[role] != "" && !secretNamePattern.MatchString(secrets[role]) {
			ps.add("/secrets/"+role, "must be a tenant secret's name (letters, digits, underscores)")
		}
	}
}

// channelBot resolves the channel's bot, which it must have, to its id.
func (c Channels) channelBot(ctx context.Context, ps *problems, tenantID, bot string) string {
	s := c.svc
	if bot == "" {
		ps.add("/bot", "is required")
		return ""
	}
	return s.Webhooks().webhookBot(ctx, ps, tenantID, bot)
}

// List lists the tenant's channels, oldest first.
func (c Channels) List(ctx context.Context, p *Principal, tenant string) ([]Channel, error) {
	s := c.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjChannels, auth.ActRead)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).Channels().List(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list channels", err)
	}
	return mapSlice(rows, channelView), nil
}

// channelFor resolves the tenant with a permission check, then its
// channel (by id or name).
func (ch Channels) channelFor(ctx context.Context, p *Principal, tenant, id, action string) (*store.Channel, error) {
	s := ch.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjChannels, action)
	if err != nil {
		return nil, err
	}
	c, err := s.store.Tenant(t.ID).Channels().Get(ctx, id)
	if err != nil {
		return nil, s.storeErr(ctx, "get channel", "channel", "", err)
	}
	return c, nil
}

// Get returns one channel.
func (ch Channels) Get(ctx context.Context, p *Principal, tenant, id string) (Channel, error) {
	s := ch.svc
	c, err := s.Channels().channelFor(ctx, p, tenant, id, auth.ActRead)
	if err != nil {
		return Channel{}, err
	}
	return channelView(c), nil
}

// Update changes a channel.
func (ch Channels) Update(ctx context.Context, p *Principal, tenant, id string, in ChannelPatch) (Channel, error) {
	s := ch.svc
	c, err := s.Channels().channelFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return Channel{}, err
	}
	var ps problems
	fields := map[string]any{}
	if in.Bot != nil {
		fields["bot_id"] = s.Channels().channelBot(ctx, &ps, c.TenantID, *in.Bot)
	}
	if in.Enabled != nil {
		fields["enabled"] = *in.Enabled
	}
	if in.Secrets != nil || in.BotUserID != nil {
		cur := channelView(c)
		cfg := channelConfig{Secrets: cur.Secrets, BotUserID: cur.BotUserID}
		if in.Secrets != nil {
			cfg.Secrets = *in.Secrets
			checkChannelSecrets(&ps, cfg.Secrets, channelSecrets[c.Kind])
		}
		if in.BotUserID != nil {
			cfg.BotUserID = *in.BotUserID
		}
		raw, _ := json.Marshal(cfg)
		fields["config"] = string(raw)
	}
	if err := ps.err(); err != nil {
		return Channel{}, err
	}
	if len(fields) > 0 {
		if err := s.store.Tenant(c.TenantID).Channels().Update(ctx, c.ID, fields); err != nil {
			return Channel{}, s.storeErr(ctx, "update channel", "channel", "", err)
		}
	}
	c, err = s.store.Tenant(c.TenantID).Channels().Get(ctx, c.ID)
	if err != nil {
		return Channel{}, s.storeErr(ctx, "get channel", "channel", "", err)
	}
	return channelView(c), nil
}

// RotateSecret replaces the channel's secret and keeps accepting
// the one it replaces for RotationOverlap, so messages the platform signed
// before it switched still come in. What is rotated depends on the kind:
//
//   - webhook: the whsec_ signing secret; secret is the caller's choice, or
//     "" for a generated one (returned, shown this once);
//   - telegram: the secret token setWebhook registers, always generated
//     (the caller registers it: inbound.Service.Channels().RotateSecret);
//   - slack: the app's signing secret, which Slack makes: secret is the
//     new one, written to the tenant secret the channel names.
func (ch Channels) RotateSecret(ctx context.Context, p *Principal, tenant, id, secret string) (CreatedChannel, error) {
	s := ch.svc
	c, err := s.Channels().channelFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return CreatedChannel{}, err
	}
	old, err := s.Channels().live(ctx, c)
	if err != nil {
		return CreatedChannel{}, err
	}
	var ps problems
	previous := old.Secret
	switch c.Kind {
	case channel.KindSlack:
		if secret == "" {
			ps.add("/secret", "is required: the signing secret Slack shows on the app's Basic Information page")
		}
		previous = old.SecretValues[ChannelSigningSecret]
	default:
		if secret, err = s.Channels().newChannelSecret(&ps, c.Kind, secret); err != nil {
			return CreatedChannel{}, s.internal(ctx, "channel secret", err)
		}
	}
	if err := ps.err(); err != nil {
		return CreatedChannel{}, err
	}
	fields := map[string]any{"prev_expires_at": s.now().Add(RotationOverlap)}
	if fields["prev_nonce"], fields["prev_cipher"], err = s.Channels().sealChannelSecret(c, previous); err != nil {
		return CreatedChannel{}, err
	}
	if c.Kind != channel.KindSlack {
		if fields["secret_nonce"], fields["secret_cipher"], err = s.Channels().sealChannelSecret(c, secret); err != nil {
			return CreatedChannel{}, err
		}
	}
	err = s.AuditLog().audited(ctx, p, c.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditChannelRotated, target: c.ID, detail: map[string]any{"kind": c.Kind}},
			tx.Tenant(c.TenantID).Channels().Update(ctx, c.ID, fields)
	})
	if err != nil {
		return CreatedChannel{}, s.storeErr(ctx, "rotate channel secret", "channel", "", err)
	}
	if c.Kind == channel.KindSlack {
		if _, err := s.Secrets().Put(ctx, p, tenant, old.Secrets[ChannelSigningSecret], secret); err != nil {
			return CreatedChannel{}, err
		}
		secret = "" // Slack's own: not Parley's to show
	}
	if c, err = s.store.Tenant(c.TenantID).Channels().Get(ctx, c.ID); err != nil {
		return CreatedChannel{}, s.storeErr(ctx, "get channel", "channel", "", err)
	}
	return CreatedChannel{Channel: channelView(c), Secret: secret}, nil
}

func (ch Channels) sealChannelSecret(c *store.Channel, secret string) ([]byte, []byte, error) {
	s := ch.svc
	nonce, cipher, err := s.opts.Sealer.Seal(c.TenantID, "channel:"+c.ID, []byte(secret))
	if err != nil {
		return nil, nil, s.internal(context.Background(), "seal channel secret", err)
	}
	return nonce, cipher, nil
}

// Delete removes a channel; its dialogs stay.
func (ch Channels) Delete(ctx context.Context, p *Principal, tenant, id string) error {
	s := ch.svc
	c, err := s.Channels().channelFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return err
	}
	if err := s.store.Tenant(c.TenantID).Channels().Delete(ctx, c.ID); err != nil {
		return s.storeErr(ctx, "delete channel", "channel", "", err)
	}
	return nil
}

// LiveChannel is a channel with what answering it needs: its own secret
// and the values of the tenant secrets it names. It is for the inbound
// path only; never put it in a response or a log.
type LiveChannel struct {
	Channel
	TenantID string
	// Tenant is the tenant's slug.
	Tenant string
	// Secret is the channel's own secret (see CreatedChannel).
	Secret string
	// PrevSecret is the secret a rotation replaced, accepted too until
	// PreviousSecretExpiresAt; "" outside the overlap. For Slack it is the
	// app's previous signing secret.
	PrevSecret string
	// SecretValues are the named tenant secrets' values, by role; a role
	// whose secret the tenant has not set is missing.
	SecretValues map[string]string
}

// ErrNoChannel is the inbound route's answer for a channel that does not
// exist or is disabled: the caller learns nothing more.
var ErrNoChannel = NotFound("channel")

// LiveByID returns an enabled channel for the public inbound
// route, which has no principal: the platform's signature, checked with
// the returned secrets, is what authenticates it.
func (ch Channels) LiveByID(ctx context.Context, id string) (LiveChannel, error) {
	s := ch.svc
	c, err := s.store.InboundChannels().ByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return LiveChannel{}, ErrNoChannel
	}
	if err != nil {
		return LiveChannel{}, s.internal(ctx, "inbound channel", err)
	}
	if !c.Enabled {
		return LiveChannel{}, ErrNoChannel
	}
	return s.Channels().live(ctx, c)
}

// Live returns the tenant's channel with its secrets, for an
// action p may take on it (Telegram's setWebhook).
func (ch Channels) Live(ctx context.Context, p *Principal, tenant, id string) (LiveChannel, error) {
	s := ch.svc
	c, err := s.Channels().channelFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return LiveChannel{}, err
	}
	return s.Channels().live(ctx, c)
}

func (ch Channels) live(ctx context.Context, c *store.Channel) (LiveChannel, error) {
	s := ch.svc
	t, err := s.store.Tenants().Get(ctx, c.TenantID)
	if err != nil {
		return LiveChannel{}, s.internal(ctx, "channel tenant", err)
	}
	out := LiveChannel{Channel: channelView(c), TenantID: c.TenantID, Tenant: t.Slug, SecretValues: map[string]string{}}
	plain, err := s.opts.Sealer.Open(c.TenantID, "channel:"+c.ID, c.SecretNonce, c.SecretCipher)
	if err != nil {
		return LiveChannel{}, s.internal(ctx, "open channel secret", errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?")))
	}
	out.Secret = string(plain)
	if out.PreviousSecretExpiresAt != nil {
		prev, err := s.opts.Sealer.Open(c.TenantID, "channel:"+c.ID, c.PrevNonce, c.PrevCipher)
		if err != nil {
			return LiveChannel{}, s.internal(ctx, "open previous channel secret", err)
		}
		out.PrevSecret = string(prev)
	}
	names := make([]string, 0, len(out.Secrets))
	for _, name := range out.Secrets {
		names = append(names, name)
	}
	vars, err := s.Secrets().Vars(ctx, c.TenantID, names)
	if err != nil {
		return LiveChannel{}, err
	}
	for role, name := range out.Secrets {
		if v, ok := vars["secrets."+name]; ok {
			out.SecretValues[role] = v
		}
	}
	return out, nil
}

// ChannelPrincipal is who a channel's messages chat as: a chat-scoped
// caller of the channel's tenant, bound to its bot, metered and rate
// limited under the channel's id as a key would be.
func ChannelPrincipal(c LiveChannel) *Principal {
	return &Principal{Kind: KindKey, TenantID: c.TenantID, KeyID: c.ID, KeyKind: auth.KindSecret,
		Scopes: []string{auth.ScopeChat}, BotID: c.BotID}
}

// errChannelSecretMissing says which tenant secret a channel lacks.
func errChannelSecretMissing(role, name string) error {
	return fmt.Errorf("channel: tenant secret %s (%s) is not set", name, role)
}

// RequireSecret returns the value of the tenant secret the channel names
// for role, or an error naming the secret (never a value).
func (c LiveChannel) RequireSecret(role string) (string, error) {
	v, ok := c.SecretValues[role]
	if !ok || v == "" {
		return "", errChannelSecretMissing(role, c.Secrets[role])
	}
	return v, nil
}
