// Package store keeps Parley's data with gorm: SQLite embedded by default,
// PostgreSQL for production. It is the only package that talks to the
// database.
//
// # The tenant boundary
//
// Tenant data is reached through a tenant handle and nothing else:
//
//	t := st.Tenant(tenantID)
//	bot, err := t.Bots().Get(ctx, "support")
//	err = t.Versions().Publish(ctx, bot.ID, 3)
//
// Each subject of a tenant (Bots, Versions, Dialogs, Messages, Keys,
// Members, Secrets, Webhooks, Channels, Usage, Audit, ...) is a small type
// that holds the tenant it was made for and scopes every query by it, so
// no call can name another tenant: another tenant's row is simply
// ErrNotFound, and a struct written through a handle (a Bot, a Message)
// is written to the handle's tenant whatever its TenantID said.
//
// Cross-tenant operations are the few that have no tenant yet or work for
// every tenant: the platform operator's tenant CRUD (st.Tenants()), people
// and their sessions (st.Users(), st.Sessions()), an invite or a key found
// by its token or hash before its tenant is known (st.Invites(),
// st.KeyAuth()), the public inbound route's channel lookup
// (st.InboundChannels()), the workers' claim loops and sweeps
// (st.Outbox(), st.ChannelJobs()), what a crashed process left
// (st.Abandoned()) and this process's signal subscriptions (st.Signals()).
// Each is a group of *Store named for what it is; nothing else is. *Store
// itself keeps only its lifecycle: Open, Migrate, Close, Ping, Tx, Dialect,
// Tenant and those group accessors.
//
// Tx runs a function in one transaction and gives it a Store whose
// handles are bound to that transaction: tx.Tenant(id).Bots().Create(...).
//
// A new subject is a new file holding its model, its type (type Things
// struct{ scope }, whose methods take no tenant id and scope every query
// by the receiver's tenant) and an accessor in scope.go; a cross-tenant operation goes on a group
// type of its subject (struct{ s *Store }), with a doc comment saying why
// it cannot be scoped. Its schema is a new numbered step in migrations.go;
// earlier steps never change.
//
// Errors wrap ErrNotFound or ErrConflict with %w; compare with errors.Is.
package store
