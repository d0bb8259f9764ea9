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
// # How the store speaks SQL
//
// Every statement goes through gorm, in one of two forms:
//
//   - the builder (Where, Find, Create, Updates, Delete, Pluck, Count,
//     subqueries as *gorm.DB arguments) for every statement it can say;
//   - SQL text through gorm's Raw or Exec, with ? (or @name and
//     sql.Named where a value repeats), for what the builder cannot say:
//     RETURNING, WITH, INSERT ... SELECT ... ON CONFLICT, FOR UPDATE SKIP
//     LOCKED claims, full-text and vector search, aggregates over computed
//     buckets, pg_notify. rows.Scan by hand (Raw(...).Rows()) where a row
//     is scanned by a shared scanner such as scanDialog.
//
// The one exception is the turn path: the statements every turn runs
// (the lease in leases.go, the history, append and update of messages.go,
// the dialog read and save of dialogs.go, the Idempotency-Key records of
// idempotency.go, the daily quota of usage.go and the live-stream signal of
// dialog_signals.go). They are SQL text with $n placeholders, sent
// through database/sql by sql.go's exec and query, prepared once on SQLite
// (statements.go) and scanned by hand, because BenchmarkTurnStatements
// (sqlforms_bench_test.go) measures them 1.3 to 2 times faster than either
// gorm form. Nothing else uses sql.go; TestDirectSQLStaysOnTheTurnPath
// keeps it so. A statement joins the turn path only with a benchmark.
//
// Errors wrap ErrNotFound or ErrConflict with %w; compare with errors.Is.
package store
