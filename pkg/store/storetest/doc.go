// Package storetest opens real, migrated, throw-away stores for tests: an
// SQLite database in a temporary directory always, and a fresh PostgreSQL
// schema as well when PARLEY_TEST_DATABASE_URL is set. Suites that run on
// every backend catch dialect differences where they happen.
//
//	storetest.ForEach(t, func(t *testing.T, st *store.Store) { ... })
package storetest
