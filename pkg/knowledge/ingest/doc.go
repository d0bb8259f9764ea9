// Package ingest is the knowledge indexing worker: it claims queued
// sources from the store's KnowledgeJobs queue (on pkg/worker's pool,
// like the webhook deliverer), reads each source's content, extracts its
// text (pkg/knowledge/extract), cuts it into chunks (pkg/knowledge/chunk),
// embeds them in batches with the base's embedding model, and stores
// them, making the source ready. A base without an embedding provider is
// indexed for keyword search only.
//
// A url source's page is fetched through pkg/outbound's client under
// Options.Outbound as UserAgent, obeying the host's robots.txt, asking
// with its ETag and Last-Modified whether it changed since it was
// indexed; an unchanged page keeps its chunks. A sitemap is read as a
// stream (gzipped or not, a sitemap index followed) and each page it
// lists becomes a url source of its own, up to the tenant's limit of
// pages per sitemap; pages the policy or robots.txt refuse are made
// failed with the reason. A source with a refresh interval is due again
// after it, on Options.Now's clock.
//
// A failure is recorded on the source in words its owner can act on. A
// transient one (the embedding provider rate-limited or down, the
// database busy) queues the source again after a growing wait: 1
// minute, 5, 30, 2 hours, then 6 hours, or longer when the provider
// asked for it; after MaxAttempts the source fails. A permanent one (an
// encrypted PDF, a file that is not UTF-8, a chunk limit reached) fails
// it at once.
//
//	w := ingest.New(st, embedders, ingest.Options{Instance: id})
//	go w.Run(ctx)
package ingest
