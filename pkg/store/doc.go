// Package store keeps Parley's data with gorm: SQLite embedded by default,
// PostgreSQL for production. Every query of tenant data is scoped by tenant
// inside this package.
package store
