// Package store keeps Parley's data with gorm: SQLite embedded by default,
// PostgreSQL for production. It is the only package that talks to the
// database.
//
// Open a store with Open, bring its schema up to date with Migrate, then use
// the typed methods. Every method that touches tenant data takes the tenant
// id as its first argument after the context and scopes its query by it, so
// a caller cannot forget the tenant boundary: another tenant's row is simply
// ErrNotFound.
//
// Layout: one file per subject (tenants.go, keys.go, bots.go, ...). A new
// subject (dialogs, leases, usage) is a new model file plus a new numbered
// step in migrations.go; earlier steps never change.
//
// Errors wrap ErrNotFound or ErrConflict with %w; compare with errors.Is.
package store
