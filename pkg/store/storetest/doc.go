// Package storetest opens real, migrated, throw-away stores for tests: an
// SQLite database in a temporary directory always, and a fresh PostgreSQL
// schema as well when PARLEY_TEST_DATABASE_URL is set. Suites
// that run on every backend catch dialect differences where they happen.
//
//	storetest.ForEach(t, func(t *testing.T, st *store.Store) { ... })
//
// A test process runs the migrations once per backend, into a template,
// and every test gets a copy of it: the SQLite file copied into its
// directory, and on PostgreSQL a new schema the template's tables are
// copied into (clone.go). So a store costs a file copy or one round trip,
// not every migration, and tests that own their store may run in
// parallel.
package storetest
