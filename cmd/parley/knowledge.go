package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
)

// startKnowledge runs the worker that indexes queued knowledge sources
// (docs/knowledge.md) until ctx ends or the returned func is called; that
// func waits for the sources in hand to be written or released, so call
// it before the store closes. Every server runs one: claims keep two
// servers off the same source, and a dead server's claims lapse.
func startKnowledge(ctx context.Context, d *data) (func(), error) {
	policy, err := outboundPolicy(d.settings)
	if err != nil {
		return nil, err
	}
	embedders, err := serverEmbedders(d.settings, d.log)
	if err != nil {
		return nil, err
	}
	if d.store.Dialect() == store.DialectSQLite {
		// This server holds the database alone (its server lock), so a
		// claim left in it is a dead server's: index those sources now.
		if _, err := d.store.KnowledgeJobs().ReleaseClaims(ctx); err != nil {
			return nil, err
		}
	}
	kn := d.platform.Knowledge()
	w := ingest.New(d.store, embedders, ingest.Options{
		Instance: d.store.Instance(),
		Wake:     d.platform.Knowledge().Queued(), // a source this process queued starts at once
		Outbound: policy,
		Log:      d.log,
		Embedded: func(ctx context.Context, src *store.KnowledgeSource, tokens int) {
			kn.MeterIndexing(ctx, src.TenantID, tokens)
		},
		Indexed: func(src *store.KnowledgeSource, outcome string, took time.Duration, chunks int) {
			kn.ObserveIndexing(src.Kind, outcome, took, chunks)
		},
		Settled: func(ctx context.Context, src *store.KnowledgeSource) {
			if err := d.platform.Knowledge().SourceSettled(ctx, src); err != nil {
				d.log.Error("knowledge source event not written", "source", src.ID, "err", err)
			}
		},
	})
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	return func() { cancel(); wg.Wait() }, nil
}

// serverEmbedders finds a knowledge base's embedding provider among the
// server's providers, by name; a base without one is searched by keyword
// alone.
func serverEmbedders(s Settings, log *slog.Logger) (func(provider string) (llm.Embedder, bool), error) {
	_, named, err := openProviders(s, log)
	if err != nil {
		return nil, err
	}
	return func(name string) (llm.Embedder, bool) {
		e, ok := named[name].(llm.Embedder)
		return e, ok
	}, nil
}
