package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/knowledge/chunk"
	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/worker"
)

// Embedders finds the embedder of a base's embedding provider by name;
// ok is false for a provider not configured.
type Embedders func(provider string) (e llm.Embedder, ok bool)

// Options configure a Worker. A zero field uses the default.
type Options struct {
	// Instance names this process in its claims (default "ingest").
	Instance string
	// Lease is how long a claim holds before another worker may take
	// the source over (default 15 minutes).
	Lease time.Duration
	// Poll is how often an idle worker looks for queued sources
	// (default 5 seconds); Wake cuts the wait short.
	Poll time.Duration
	Wake <-chan struct{}
	// Concurrency bounds the sources indexed at once (default 2).
	Concurrency int
	// BatchSize bounds the chunks embedded in one request (default 64).
	BatchSize int
	// MaxAttempts is how many times a transient failure is retried
	// before the source fails (default 8).
	MaxAttempts int
	// Outbound is the policy url sources are fetched under, through
	// pkg/outbound's client (default: the zero policy, public addresses
	// on ports 80 and 443 only).
	Outbound outbound.Policy
	Chunking chunk.Options
	Limits   extract.Limits
	// Settled, when set, is told of a source that became ready or failed
	// for good, as the store now holds it: the server emits the
	// knowledge.source_ready and knowledge.source_failed webhooks from it.
	Settled func(ctx context.Context, src *store.KnowledgeSource)
	// Embedded, when set, is told of the tokens the embedding provider
	// billed for each batch of src's chunks it embedded, whether or not
	// the source is then stored: the server meters them to the source's
	// tenant.
	Embedded func(ctx context.Context, src *store.KnowledgeSource, tokens int)
	// Indexed, when set, is told how each attempt at a source ended
	// (OutcomeReady, OutcomeRetry or OutcomeFailed), how long it took and
	// how many chunks it stored, for the metrics.
	Indexed func(src *store.KnowledgeSource, outcome string, took time.Duration, chunks int)
	// Now is the clock retries are scheduled by (default time.Now).
	Now func() time.Time
	Log *slog.Logger
}

// Defaults of Options.
const (
	DefaultLease       = 15 * time.Minute
	DefaultPoll        = 5 * time.Second
	DefaultConcurrency = 2
	DefaultBatchSize   = 64
	DefaultMaxAttempts = 8
)

// Outcomes of an attempt at indexing a source (Options.Indexed).
const (
	OutcomeReady  = "ready"
	OutcomeRetry  = "retry"
	OutcomeFailed = "failed"
)

// backoff is the wait before the nth retry, from the first; the last
// repeats.
var backoff = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}

// Worker indexes queued knowledge sources.
type Worker struct {
	st        *store.Store
	jobs      store.KnowledgeJobs // on opts.Now's clock
	embedders Embedders
	opts      Options
	client    *http.Client // fetches url sources, under opts.Outbound
	robots    robotsCache
}

// New returns a worker over st; embedders may be nil when no embedding
// provider is configured (every base is then keyword-only, and a base
// naming a provider waits for one).
func New(st *store.Store, embedders Embedders, opts Options) *Worker {
	if opts.Instance == "" {
		opts.Instance = "ingest"
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if embedders == nil {
		embedders = func(string) (llm.Embedder, bool) { return nil, false }
	}
	client := outbound.NewClient(opts.Outbound, outbound.Options{Timeout: 2 * time.Minute})
	return &Worker{st: st, jobs: st.KnowledgeJobs().WithClock(opts.Now), embedders: embedders, opts: opts, client: client}
}

// Run indexes queued sources until ctx ends, then waits for the ones in
// flight.
func (w *Worker) Run(ctx context.Context) {
	pool := &worker.Pool[store.KnowledgeSource]{
		Claim: func(ctx context.Context, n int, skip []string) ([]store.KnowledgeSource, error) {
			return w.jobs.Claim(ctx, w.opts.Instance, w.opts.Lease, n, skip)
		},
		Key:         func(s store.KnowledgeSource) string { return s.ID },
		Work:        func(ctx context.Context, s store.KnowledgeSource) { w.Index(ctx, &s) },
		ClaimFailed: func(err error) { w.opts.Log.Error("knowledge: claim sources", "err", err) },
		Poll:        w.opts.Poll,
		Wake:        w.opts.Wake,
		Concurrency: w.opts.Concurrency,
	}
	pool.Run(ctx)
	pool.Wait()
}

// RunOnce claims the sources due now, up to Concurrency, and indexes
// them one after the other; it returns how many it claimed.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	srcs, err := w.jobs.Claim(ctx, w.opts.Instance, w.opts.Lease, w.opts.Concurrency, nil)
	for i := range srcs {
		w.Index(ctx, &srcs[i])
	}
	return len(srcs), err
}

// Index indexes one claimed source and records the outcome on it. A
// sitemap is read and its pages become sources of their own, indexed
// like any url source.
func (w *Worker) Index(ctx context.Context, src *store.KnowledgeSource) {
	log := w.opts.Log.With("tenant", src.TenantID, "source", src.ID)
	var err error
	chunks := 0
	begin := time.Now()
	indexed := func(outcome string) {
		if w.opts.Indexed != nil {
			w.opts.Indexed(src, outcome, time.Since(begin), chunks)
		}
	}
	if src.Kind == store.SourceSitemap {
		err = w.indexSitemap(ctx, src)
	} else {
		var r store.KnowledgeIndexed
		if r, err = w.index(ctx, src, log); err == nil {
			err = w.jobs.Done(ctx, src, r)
			chunks = len(r.Chunks)
		}
	}
	if err == nil {
		log.Info("knowledge: source indexed", "chunks", chunks)
		indexed(OutcomeReady)
		w.settled(ctx, src)
		return
	}
	err = storeError(err)
	if ctx.Err() != nil {
		return // shutting down: the lapsed claim makes the source due again
	}
	reason, retryAt := w.outcome(src, err)
	log.Warn("knowledge: source not indexed", "reason", reason, "retry_at", retryAt)
	if retryAt.IsZero() {
		indexed(OutcomeFailed)
	} else {
		indexed(OutcomeRetry)
	}
	if ferr := w.jobs.Fail(ctx, src, reason, retryAt); ferr != nil {
		log.Error("knowledge: record failed source", "err", ferr)
	} else if retryAt.IsZero() {
		w.settled(ctx, src)
	}
}

// storeError words the store's refusals of an indexed source for its
// owner; each is permanent.
func storeError(err error) error {
	switch {
	case errors.Is(err, store.ErrKnowledgeLimit):
		return permanent("the knowledge base is full: the tenant's knowledge bases hold at most %s; delete sources or ask for higher knowledge limits", limitOf(err))
	case errors.Is(err, store.ErrKnowledgeDimensions):
		return permanent("the embedding model answered vectors of another length than the base's (%s): the base cannot mix models; reindex it to change its model", strings.TrimPrefix(strings.TrimSuffix(err.Error(), ": "+store.ErrKnowledgeDimensions.Error()), "store: index knowledge source: "))
	case errors.Is(err, store.ErrConflict):
		// The same content as another source, or the claim lapsed
		// (then Fail is refused too, and only logged).
		return permanent("%s", strings.TrimSuffix(strings.TrimPrefix(err.Error(), "store: finish knowledge source: "), ": "+store.ErrConflict.Error()))
	}
	return err
}

// limitOf reads the limit out of the store's error ("…: 200000 chunks:
// knowledge limit reached").
func limitOf(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+store.ErrKnowledgeLimit.Error())
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// settled tells Options.Settled of src as the store now holds it.
func (w *Worker) settled(ctx context.Context, src *store.KnowledgeSource) {
	if w.opts.Settled == nil {
		return
	}
	now, err := w.st.Tenant(src.TenantID).Knowledge().Source(ctx, src.BaseID, src.ID)
	if err != nil {
		w.opts.Log.Error("knowledge: read settled source", "source", src.ID, "err", err)
		return
	}
	w.opts.Settled(ctx, now)
}

// outcome is the reason recorded for err, and when to retry (zero: do
// not).
func (w *Worker) outcome(src *store.KnowledgeSource, err error) (string, time.Time) {
	var p *permanentError
	if errors.As(err, &p) || errors.Is(err, extract.ErrPermanent) {
		return err.Error(), time.Time{}
	}
	if src.Attempts >= w.opts.MaxAttempts {
		return fmt.Sprintf("%v (gave up after %d attempts)", err, src.Attempts), time.Time{}
	}
	wait := backoff[min(max(src.Attempts-1, 0), len(backoff)-1)]
	if _, after := llm.IsRetryable(err); after > wait {
		wait = after
	}
	return fmt.Sprintf("%v (attempt %d of %d; retrying)", err, src.Attempts, w.opts.MaxAttempts), w.opts.Now().Add(wait)
}

// index reads, extracts, chunks and embeds src.
func (w *Worker) index(ctx context.Context, src *store.KnowledgeSource, log *slog.Logger) (store.KnowledgeIndexed, error) {
	var r store.KnowledgeIndexed
	kn := w.st.Tenant(src.TenantID).Knowledge()
	base, err := kn.Base(ctx, src.BaseID)
	if err != nil {
		return r, fmt.Errorf("read the knowledge base: %w", err)
	}
	r.ContentHash = src.ContentHash
	filename, contentType := src.Filename, src.ContentType
	var data []byte
	switch src.Kind {
	case store.SourceURL:
		// Ask whether the page changed only when its chunks are where
		// Done would keep them.
		gen := base.Generation
		if base.Building != 0 {
			gen = base.Building
		}
		p, err := w.fetch(ctx, src, src.IndexedAt != nil && src.Generation == gen)
		if err != nil {
			return r, err
		}
		r.ContentHash, r.ETag, r.LastModified, r.Bytes = p.hash, p.etag, p.lastModified, int64(len(p.data))
		if p.unchanged {
			r.Unchanged, r.Pages = true, src.Pages
			return r, nil
		}
		data, filename, contentType = p.data, p.filename, p.contentType
	default:
		data, err = kn.Content(ctx, src.ID)
		if err != nil {
			return r, fmt.Errorf("read the source's content: %w", err)
		}
		if len(data) == 0 {
			return r, permanent("the source has no content: add it again")
		}
	}
	doc, err := extract.Extract(data, filename, contentType, w.opts.Limits)
	if err != nil {
		return r, err
	}
	for _, warning := range doc.Warnings {
		log.Info("knowledge: extraction warning", "warning", warning)
	}
	chunks := chunk.Split(doc, w.opts.Chunking)
	if len(chunks) == 0 {
		return r, permanent("the document has headings but no text under them: nothing to index")
	}
	r.Title, r.Pages, r.Chunks = doc.Title, doc.Pages, make([]store.KnowledgeChunk, len(chunks))
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		title := c.Title
		if title == "" {
			title = src.Title
		}
		r.Chunks[i] = store.KnowledgeChunk{Ordinal: i, Text: c.Text, Title: title, Locator: c.Locator, Tokens: c.Tokens, Hash: c.Hash}
		texts[i] = c.Text
	}
	provider, model := base.EmbeddingProvider, base.EmbeddingModel
	if base.Building != 0 {
		provider, model = base.BuildingProvider, base.BuildingModel
	}
	if provider == "" {
		return r, nil // keyword search only
	}
	emb, ok := w.embedders(provider)
	if !ok {
		return r, fmt.Errorf("the base's embedding provider %q is not configured on this server", provider)
	}
	for start := 0; start < len(texts); start += w.opts.BatchSize {
		end := min(start+w.opts.BatchSize, len(texts))
		vecs, usage, err := emb.Embed(ctx, model, texts[start:end])
		if w.opts.Embedded != nil && usage.InputTokens > 0 {
			w.opts.Embedded(ctx, src, usage.InputTokens)
		}
		if err != nil {
			return r, fmt.Errorf("embedding with %s model %q failed: %w", provider, model, err)
		}
		if len(vecs) != end-start {
			return r, fmt.Errorf("embedding with %s model %q: %d vectors for %d chunks", provider, model, len(vecs), end-start)
		}
		for i, v := range vecs {
			r.Chunks[start+i].Embedding = v
		}
	}
	return r, nil
}

// permanentError is a failure retrying cannot fix.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func permanent(format string, args ...any) error {
	return &permanentError{msg: fmt.Sprintf(format, args...)}
}
