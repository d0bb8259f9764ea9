// Package retrieve searches a knowledge base: a keyword search (the
// database's full-text index) and a vector search (the nearest chunks to
// the query's embedding), merged by reciprocal rank fusion.
//
//	s := retrieve.New(ctx, st, log) // once per process: it caches vectors
//	results, err := s.Search(ctx, tenantID, "help-center", retrieve.Query{
//		Text: "how do I reset my password", Vector: embedding, TopK: 5})
//
// The vector search runs in the database on PostgreSQL with pgvector (an
// HNSW index per base). Elsewhere (SQLite, PostgreSQL without the
// extension) it scans the base's vectors in this process: they are read
// once per index generation and revision into a cache, quantised to one
// byte a dimension (about 27 MB per 100,000 chunks of 256 dimensions),
// and scanned on every core. The caller embeds the query with the base's
// model; a query without a vector searches by keyword only.
package retrieve
