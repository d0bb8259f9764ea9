package store

// scope is what every tenant-scoped subject type holds: the store (or
// transaction) it reads and writes, and the one tenant it may touch.
type scope struct {
	s      *Store
	tenant string
}

// TenantScope is one tenant's data. The subject handles it gives read and
// write that tenant's rows only; another tenant's row is ErrNotFound.
type TenantScope struct{ scope }

// Tenant returns the handle to the tenant id's data. On a transaction's
// Store (see Tx) its handles are bound to that transaction.
func (s *Store) Tenant(id string) TenantScope { return TenantScope{scope{s: s, tenant: id}} }

// ID is the tenant the handle is scoped to.
func (t TenantScope) ID() string { return t.tenant }

// The tenant's subjects, one type each, declared in its subject's file.

// Activity returns the tenant's activity over time.
func (t TenantScope) Activity() Activity { return Activity(t) }

// Audit returns the tenant's audit log.
func (t TenantScope) Audit() Audit { return Audit(t) }

// Bots returns the tenant's bots.
func (t TenantScope) Bots() Bots { return Bots(t) }

// CannedReplies returns the tenant's canned replies.
func (t TenantScope) CannedReplies() CannedReplies { return CannedReplies(t) }

// Channels returns the tenant's channels.
func (t TenantScope) Channels() Channels { return Channels(t) }

// Dialogs returns the tenant's dialogs.
func (t TenantScope) Dialogs() Dialogs { return Dialogs(t) }

// Drafts returns the tenant's autosaved config drafts.
func (t TenantScope) Drafts() Drafts { return Drafts(t) }

// DialogReads are how far each side of the tenant's dialogs has read them.
func (t TenantScope) DialogReads() DialogReads { return DialogReads(t) }

// DialogNotes returns the internal notes members keep on the tenant's
// dialogs.
func (t TenantScope) DialogNotes() DialogNotes { return DialogNotes(t) }

// Feedback returns the tenant's feedback on replies.
func (t TenantScope) Feedback() FeedbackLog { return FeedbackLog(t) }

// Handoffs returns the tenant's dialogs handed to people.
func (t TenantScope) Handoffs() Handoffs { return Handoffs(t) }

// Idempotency returns the tenant's idempotency keys.
func (t TenantScope) Idempotency() Idempotency { return Idempotency(t) }

// Identity returns how the tenant's end-user tokens are verified.
func (t TenantScope) Identity() Identity { return Identity(t) }

// Keys returns the tenant's API keys.
func (t TenantScope) Keys() Keys { return Keys(t) }

// Insights are the tenant's dialog outcomes and analytics rollups.
func (t TenantScope) Insights() Insights { return Insights(t) }

// Leases returns the tenant's dialog leases.
func (t TenantScope) Leases() Leases { return Leases(t) }

// Limits returns the tenant's limits.
func (t TenantScope) Limits() Limits { return Limits(t) }

// Members returns the tenant's memberships and invites.
func (t TenantScope) Members() Members { return Members(t) }

// Memory returns the tenant's memory notes.
func (t TenantScope) Memory() Memory { return Memory(t) }

// Messages returns the tenant's dialog messages.
func (t TenantScope) Messages() Messages { return Messages(t) }

// PIIVaults returns the personal data behind the tenant's dialogs'
// placeholders.
func (t TenantScope) PIIVaults() PIIVaults { return PIIVaults(t) }

// Providers returns the tenant's model providers.
func (t TenantScope) Providers() Providers { return Providers(t) }

// Secrets returns the tenant's sealed secrets.
func (t TenantScope) Secrets() Secrets { return Secrets(t) }

// SSO is the tenant's own OpenID Connect provider.
func (t TenantScope) SSO() SSO { return SSO(t) }

// Usage returns the tenant's metered usage.
func (t TenantScope) Usage() UsageLedger { return UsageLedger(t) }

// Versions returns the tenant's bot versions.
func (t TenantScope) Versions() Versions { return Versions(t) }

// Webhooks returns the tenant's webhook endpoints and deliveries.
func (t TenantScope) Webhooks() Webhooks { return Webhooks(t) }

// The cross-tenant groups: each reaches every tenant's rows, for a caller
// that has no tenant yet or works for all of them. See the package doc.

// Tenants returns every tenant, for the platform operator.
func (s *Store) Tenants() Tenants { return Tenants{s} }

// Users returns people, who may belong to many tenants.
func (s *Store) Users() Users { return Users{s} }

// Sessions returns people's sign-in sessions.
func (s *Store) Sessions() Sessions { return Sessions{s} }

// OIDCLogins are single sign-ons under way.
func (s *Store) OIDCLogins() OIDCLogins { return OIDCLogins{s} }

// TwoFactor returns people's second factors and the sign-ins waiting for
// one.
func (s *Store) TwoFactor() TwoFactor { return TwoFactor{s} }

// Invites returns invites by token, before their tenant is known.
func (s *Store) Invites() Invites { return Invites{s} }

// KeyAuth returns API keys by hash, for authentication.
func (s *Store) KeyAuth() KeyAuth { return KeyAuth{s} }

// InboundChannels returns channels by id, for the public inbound route.
func (s *Store) InboundChannels() InboundChannels { return InboundChannels{s} }

// Outbox returns every tenant's webhook outbox, for the workers.
func (s *Store) Outbox() Outbox { return Outbox{s: s, now: s.db.NowFunc} }

// ChannelJobs returns every tenant's channel job queue, for the workers.
func (s *Store) ChannelJobs() ChannelJobs { return ChannelJobs{s} }

// Abandoned returns what a crashed process left, to settle at start.
func (s *Store) Abandoned() Abandoned { return Abandoned{s} }

// Signals returns this process's subscriptions to every tenant's signals.
func (s *Store) Signals() Signals { return Signals{s} }
