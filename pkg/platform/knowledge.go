package platform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/knowledge/retrieve"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
)

// Knowledge is a tenant's knowledge bases, their sources and search: reach it with Service.Knowledge().
type Knowledge struct{ svc *Service }

// Knowledge returns a tenant's knowledge bases, their sources and search.
func (s *Service) Knowledge() Knowledge { return Knowledge{s} }

// Knowledge bases as callers manage them (docs/knowledge.md). They share
// the bots' permissions: admins and editors change them, viewers read
// and search them.

// Bounds of knowledge requests.
const (
	MaxKnowledgeName  = 200
	MaxSourceTitle    = 500
	MaxSourceURL      = 2048
	MaxSourceTags     = 20
	MaxSourceTag      = 100
	MaxQAPairs        = 1000
	MaxSearchQuery    = 2000
	MaxSearchTopK     = 50
	MinSourceRefresh  = time.Hour
	maxEmbeddingField = 200
)

// Audit actions of knowledge bases.
const (
	AuditKnowledgeBaseCreated   = "knowledge_base.created"
	AuditKnowledgeBaseRenamed   = "knowledge_base.renamed"
	AuditKnowledgeBaseReindexed = "knowledge_base.reindexed"
	AuditKnowledgeBaseDeleted   = "knowledge_base.deleted"
	AuditKnowledgeSourceAdded   = "knowledge_source.added"
	AuditKnowledgeSourceRefresh = "knowledge_source.refreshed"
	AuditKnowledgeSourceDeleted = "knowledge_source.deleted"
)

// KnowledgeBaseInput is a new base: {name, slug?, embedding?}. An empty
// slug is made from the name.
type KnowledgeBaseInput struct {
	Name              string
	Slug              string
	EmbeddingProvider string
	EmbeddingModel    string
}

// SourceInput is a new source of one kind: a file (Content, Filename),
// a url or sitemap (URL), a text (Content, Title) or questions and
// answers (QA).
type SourceInput struct {
	Kind        string
	Title       string
	URL         string
	Filename    string
	ContentType string
	Content     []byte
	QA          []QAPair
	Tags        []string
	// Refresh re-indexes a url or sitemap source that often ("24h"); empty
	// never.
	Refresh string
}

// QAPair is one question with its answer.
type QAPair struct {
	Question string
	Answer   string
}

// QAContentType is the content type of a qa source's content: a JSON
// list of {"question", "answer"} objects, which the worker indexes one
// pair per chunk.
const QAContentType = "application/vnd.parley.qa+json"

// qaContent encodes pairs as a qa source's content (see QAContentType).
func qaContent(pairs []QAPair) []byte {
	out := make([]map[string]string, len(pairs))
	for i, qa := range pairs {
		out[i] = map[string]string{"question": qa.Question, "answer": qa.Answer}
	}
	b, _ := json.Marshal(out) // maps of strings always encode
	return b
}

// KnowledgeQuery is one search of a base.
type KnowledgeQuery struct {
	Query string
	TopK  int
	Tags  []string
}

// lazySearcher makes the knowledge Searcher on the first search, over the
// Service's own store (never a transaction's), so a server that never
// searches never probes for pgvector.
type lazySearcher struct {
	st *store.Store
	mu sync.Mutex
	s  *retrieve.Searcher
}

func (l *lazySearcher) get(ctx context.Context, s *Service) *retrieve.Searcher {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil {
		l.s = retrieve.New(context.WithoutCancel(ctx), l.st, s.log)
	}
	return l.s
}

// CreateBase adds a base to the tenant.
func (k Knowledge) CreateBase(ctx context.Context, p *Principal, tenant string, in KnowledgeBaseInput) (store.KnowledgeBase, error) {
	s := k.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjBots, auth.ActWrite)
	if err != nil {
		return store.KnowledgeBase{}, err
	}
	var ps problems
	ps.name("/name", in.Name, MaxKnowledgeName)
	if in.Slug == "" {
		in.Slug = slugOf(in.Name)
	}
	ps.slug("/slug", in.Slug)
	checkEmbedding(&ps, in.EmbeddingProvider, in.EmbeddingModel)
	if err := ps.err(); err != nil {
		return store.KnowledgeBase{}, err
	}
	b := store.KnowledgeBase{Name: strings.TrimSpace(in.Name), Slug: in.Slug,
		EmbeddingProvider: in.EmbeddingProvider, EmbeddingModel: in.EmbeddingModel}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditKnowledgeBaseCreated, target: b.Slug, detail: map[string]any{"name": b.Name,
			"embedding_provider": b.EmbeddingProvider, "embedding_model": b.EmbeddingModel}}, tx.Tenant(t.ID).Knowledge().CreateBase(ctx, &b)
	})
	if err != nil {
		return store.KnowledgeBase{}, s.storeErr(ctx, "create knowledge base", "knowledge base",
			"a knowledge base with the slug "+in.Slug+" already exists", err)
	}
	return b, nil
}

// checkEmbedding wants both of provider and model, or neither (keyword
// search only).
func checkEmbedding(ps *problems, provider, model string) {
	switch {
	case provider == "" && model == "":
	case provider == "":
		ps.add("/embedding/provider", "is required with a model")
	case model == "":
		ps.add("/embedding/model", "is required with a provider")
	case len(provider) > maxEmbeddingField || len(model) > maxEmbeddingField:
		ps.add("/embedding", "provider and model must be at most %d bytes", maxEmbeddingField)
	}
}

// slugOf makes a slug from a name: lowercase letters and digits, other
// runs as one dash.
func slugOf(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 63 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// ListBases lists the tenant's bases by slug.
func (k Knowledge) ListBases(ctx context.Context, p *Principal, tenant string) ([]store.KnowledgeBase, error) {
	s := k.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjBots, auth.ActRead)
	if err != nil {
		return nil, err
	}
	bases, err := s.store.Tenant(t.ID).Knowledge().Bases(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list knowledge bases", err)
	}
	return bases, nil
}

// baseFor resolves the tenant with a permission check, then its base (by
// id or slug).
func (k Knowledge) baseFor(ctx context.Context, p *Principal, tenant, base, action string) (store.Knowledge, *store.KnowledgeBase, error) {
	s := k.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjBots, action)
	if err != nil {
		return store.Knowledge{}, nil, err
	}
	kn := s.store.Tenant(t.ID).Knowledge()
	b, err := kn.Base(ctx, base)
	if err != nil {
		return kn, nil, s.storeErr(ctx, "get knowledge base", "knowledge base", "", err)
	}
	return kn, b, nil
}

// GetBase returns one base.
func (k Knowledge) GetBase(ctx context.Context, p *Principal, tenant, base string) (store.KnowledgeBase, error) {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActRead)
	if err != nil {
		return store.KnowledgeBase{}, err
	}
	return *b, nil
}

// RenameBase changes a base's name; the only field a PATCH
// changes (the embedding model changes with a reindex).
func (k Knowledge) RenameBase(ctx context.Context, p *Principal, tenant, base, name string) (store.KnowledgeBase, error) {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActWrite)
	if err != nil {
		return store.KnowledgeBase{}, err
	}
	var ps problems
	ps.name("/name", name, MaxKnowledgeName)
	if err := ps.err(); err != nil {
		return store.KnowledgeBase{}, err
	}
	name = strings.TrimSpace(name)
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditKnowledgeBaseRenamed, target: b.Slug, detail: map[string]any{"from": b.Name, "name": name}},
			tx.Tenant(b.TenantID).Knowledge().RenameBase(ctx, b.ID, name)
	})
	if err != nil {
		return store.KnowledgeBase{}, s.storeErr(ctx, "rename knowledge base", "knowledge base", "", err)
	}
	return s.Knowledge().GetBase(ctx, p, tenant, b.ID)
}

// DeleteBase deletes a base with its sources, chunks and
// vectors.
func (k Knowledge) DeleteBase(ctx context.Context, p *Principal, tenant, base string) error {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditKnowledgeBaseDeleted, target: b.Slug}, tx.Tenant(b.TenantID).Knowledge().DeleteBase(ctx, b.ID)
	})
	if err != nil {
		return s.storeErr(ctx, "delete knowledge base", "knowledge base", "", err)
	}
	s.searcher.forget(b.ID)
	return nil
}

// forget drops a deleted base's cached vectors, if a Searcher was made.
func (l *lazySearcher) forget(baseID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		l.s.Forget(baseID)
	}
}

// ReindexBase starts a new index generation of the base, which
// replaces the current one when every source is indexed into it.
func (k Knowledge) ReindexBase(ctx context.Context, p *Principal, tenant, base string) (store.KnowledgeBase, error) {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActWrite)
	if err != nil {
		return store.KnowledgeBase{}, err
	}
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		generation, err := tx.Tenant(b.TenantID).Knowledge().Reindex(ctx, b.ID, "", "")
		return auditRecord{action: AuditKnowledgeBaseReindexed, target: b.Slug, detail: map[string]any{"generation": generation}}, err
	})
	if err != nil {
		return store.KnowledgeBase{}, s.storeErr(ctx, "reindex knowledge base", "knowledge base", "", err)
	}
	s.Knowledge().wakeIndexer()
	return s.Knowledge().GetBase(ctx, p, tenant, b.ID)
}

// AddSource queues a source in the base. created is false when
// the base already holds the same content: the source is that one.
func (k Knowledge) AddSource(ctx context.Context, p *Principal, tenant, base string, in SourceInput) (src store.KnowledgeSource, created bool, err error) {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActWrite)
	if err != nil {
		return store.KnowledgeSource{}, false, err
	}
	row, err := s.Knowledge().sourceRow(ctx, in)
	if err != nil {
		return store.KnowledgeSource{}, false, err
	}
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		created, err = tx.Tenant(b.TenantID).Knowledge().AddSource(ctx, b.ID, &row)
		if err == nil && !created {
			err = errUnchanged
		}
		return auditRecord{action: AuditKnowledgeSourceAdded, target: row.ID, detail: map[string]any{"base": b.Slug,
			"kind": row.Kind, "title": row.Title, "filename": row.Filename, "url": redactURL(row.URL), "bytes": row.Bytes}}, err
	})
	if errors.Is(err, errUnchanged) {
		return row, false, nil
	}
	if errors.Is(err, store.ErrKnowledgeLimit) {
		e := Wrap(err, CodeConflict, "%s", limitMessage(err))
		e.Details = []Detail{{Pointer: "/" + in.Kind, Message: e.Message}}
		return store.KnowledgeSource{}, false, e
	}
	if err != nil {
		return store.KnowledgeSource{}, false, s.storeErr(ctx, "add knowledge source", "knowledge base", "", err)
	}
	s.Knowledge().wakeIndexer()
	return row, true, nil
}

// errUnchanged rolls back the audit entry of a source that was already
// there: nothing changed.
var errUnchanged = errors.New("unchanged")

// limitMessage says which of the tenant's knowledge limits a source would
// pass, from the store's error ("…: 1000 sources: knowledge limit
// reached").
func limitMessage(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+store.ErrKnowledgeLimit.Error())
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return "the tenant's knowledge bases hold at most " + msg + "; delete sources or raise the tenant's knowledge limits"
}

// redactURL keeps a URL's scheme, host and path for the audit log: a
// query may hold a token.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// sourceRow checks a new source and makes its row, content and hash
// included.
func (k Knowledge) sourceRow(ctx context.Context, in SourceInput) (store.KnowledgeSource, error) {
	s := k.svc
	var ps problems
	row := store.KnowledgeSource{Kind: in.Kind, Title: strings.TrimSpace(in.Title), Filename: in.Filename,
		ContentType: in.ContentType, Tags: in.Tags}
	if utf8.RuneCountInString(row.Title) > MaxSourceTitle {
		ps.add("/title", "must have at most %d characters", MaxSourceTitle)
	}
	if len(in.Tags) > MaxSourceTags {
		ps.add("/tags", "must hold at most %d tags", MaxSourceTags)
	}
	for i, tag := range in.Tags {
		if tag == "" || len(tag) > MaxSourceTag || strings.TrimSpace(tag) != tag {
			ps.add(fmt.Sprintf("/tags/%d", i), "must be 1-%d bytes without surrounding spaces", MaxSourceTag)
		}
	}
	if in.Refresh != "" {
		d, err := time.ParseDuration(in.Refresh)
		switch {
		case in.Kind != store.SourceURL && in.Kind != store.SourceSitemap:
			ps.add("/refresh", "is only for url and sitemap sources, which are fetched again")
		case err != nil:
			ps.add("/refresh", "must be a duration like \"24h\"")
		case d < MinSourceRefresh:
			ps.add("/refresh", "must be at least %s", MinSourceRefresh)
		default:
			row.RefreshSeconds = int64(d / time.Second)
		}
	}
	switch in.Kind {
	case store.SourceFile:
		if len(in.Content) == 0 {
			ps.add("/file", "is empty")
		}
		if row.Title == "" {
			row.Title = in.Filename
		}
		row.Content = in.Content
	case store.SourceText:
		if strings.TrimSpace(string(in.Content)) == "" {
			ps.add("/text", "is required")
		} else if !utf8.Valid(in.Content) {
			ps.add("/text", "must be UTF-8")
		}
		row.Content, row.ContentType = in.Content, "text/plain; charset=utf-8"
	case store.SourceQA:
		if len(in.QA) == 0 {
			ps.add("/qa", "must hold at least one {question, answer}")
		}
		if len(in.QA) > MaxQAPairs {
			ps.add("/qa", "must hold at most %d pairs", MaxQAPairs)
		}
		for i, qa := range in.QA {
			if strings.TrimSpace(qa.Question) == "" {
				ps.add(fmt.Sprintf("/qa/%d/question", i), "is required")
			}
			if strings.TrimSpace(qa.Answer) == "" {
				ps.add(fmt.Sprintf("/qa/%d/answer", i), "is required")
			}
		}
		row.Content, row.ContentType = qaContent(in.QA), QAContentType
	case store.SourceURL, store.SourceSitemap:
		row.URL = in.URL
		s.Knowledge().checkSourceURL(ctx, &ps, "/"+in.Kind, in.URL)
	default:
		ps.add("", "send a multipart file, or a JSON object with one of url, sitemap, text, qa")
	}
	if err := ps.err(); err != nil {
		return store.KnowledgeSource{}, err
	}
	row.Bytes = int64(len(row.Content))
	if row.Content == nil {
		// A page is fetched later: the same URL added twice is one source
		// until then.
		row.ContentHash = store.URLSourceHash(row.Kind, row.URL)
		return row, nil
	}
	sum := sha256.Sum256(row.Content)
	row.ContentHash = "sha256:" + hex.EncodeToString(sum[:])
	return row, nil
}

// checkSourceURL accepts an absolute http(s) URL without credentials;
// with an outbound policy set, its destination must be allowed now too
// (the worker checks again as it fetches).
func (k Knowledge) checkSourceURL(ctx context.Context, ps *problems, pointer, raw string) {
	s := k.svc
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		ps.add(pointer, "is required")
	case len(raw) > MaxSourceURL:
		ps.add(pointer, "must be at most %d characters", MaxSourceURL)
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		ps.add(pointer, "must be an absolute http or https URL")
	case u.User != nil:
		ps.add(pointer, "must not hold credentials")
	case s.opts.OutboundPolicy != nil:
		if err := outbound.CheckURL(ctx, *s.opts.OutboundPolicy, outbound.Options{}, raw); err != nil {
			ps.add(pointer, "%s", outboundProblem(err))
		}
	}
}

// ListSources lists the base's sources, oldest first.
func (k Knowledge) ListSources(ctx context.Context, p *Principal, tenant, base string) ([]store.KnowledgeSource, error) {
	s := k.svc
	kn, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActRead)
	if err != nil {
		return nil, err
	}
	srcs, err := kn.Sources(ctx, b.ID)
	if err != nil {
		return nil, s.internal(ctx, "list knowledge sources", err)
	}
	return srcs, nil
}

// GetSource returns one source of the base.
func (k Knowledge) GetSource(ctx context.Context, p *Principal, tenant, base, source string) (store.KnowledgeSource, error) {
	s := k.svc
	kn, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActRead)
	if err != nil {
		return store.KnowledgeSource{}, err
	}
	src, err := kn.Source(ctx, b.ID, source)
	if err != nil {
		return store.KnowledgeSource{}, s.storeErr(ctx, "get knowledge source", "knowledge source", "", err)
	}
	return *src, nil
}

// DeleteSource deletes a source with its content, chunks and
// vectors.
func (k Knowledge) DeleteSource(ctx context.Context, p *Principal, tenant, base, source string) error {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditKnowledgeSourceDeleted, target: source, detail: map[string]any{"base": b.Slug}},
			tx.Tenant(b.TenantID).Knowledge().DeleteSource(ctx, b.ID, source)
	})
	return s.storeErr(ctx, "delete knowledge source", "knowledge source", "", err)
}

// RefreshSource queues a source to be indexed again now.
func (k Knowledge) RefreshSource(ctx context.Context, p *Principal, tenant, base, source string) (store.KnowledgeSource, error) {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActWrite)
	if err != nil {
		return store.KnowledgeSource{}, err
	}
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditKnowledgeSourceRefresh, target: source, detail: map[string]any{"base": b.Slug}},
			tx.Tenant(b.TenantID).Knowledge().RefreshSource(ctx, b.ID, source)
	})
	if err != nil {
		return store.KnowledgeSource{}, s.storeErr(ctx, "refresh knowledge source", "knowledge source", "", err)
	}
	s.Knowledge().wakeIndexer()
	return s.Knowledge().GetSource(ctx, p, tenant, b.ID, source)
}

// SourceChunks lists a source's chunks in the base's current
// generation, in order.
func (k Knowledge) SourceChunks(ctx context.Context, p *Principal, tenant, base, source string) ([]store.KnowledgeChunk, error) {
	s := k.svc
	kn, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActRead)
	if err != nil {
		return nil, err
	}
	if _, err := kn.Source(ctx, b.ID, source); err != nil {
		return nil, s.storeErr(ctx, "get knowledge source", "knowledge source", "", err)
	}
	chunks, err := kn.Chunks(ctx, b.ID, source)
	if err != nil {
		return nil, s.internal(ctx, "list knowledge chunks", err)
	}
	return chunks, nil
}

// Search finds the chunks of the base that best answer q: by
// keyword, and by vector when the base has an embedding model.
func (k Knowledge) Search(ctx context.Context, p *Principal, tenant, base string, q KnowledgeQuery) ([]retrieve.Result, error) {
	s := k.svc
	_, b, err := s.Knowledge().baseFor(ctx, p, tenant, base, auth.ActRead)
	if err != nil {
		return nil, err
	}
	var ps problems
	switch n := utf8.RuneCountInString(strings.TrimSpace(q.Query)); {
	case n == 0:
		ps.add("/query", "is required")
	case n > MaxSearchQuery:
		ps.add("/query", "must have at most %d characters", MaxSearchQuery)
	}
	if q.TopK < 0 || q.TopK > MaxSearchTopK {
		ps.add("/top_k", "must be between 1 and %d", MaxSearchTopK)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	defer s.Knowledge().observeSearch(time.Now())
	query := retrieve.Query{Text: q.Query, TopK: q.TopK, Tags: q.Tags}
	var tokens int
	if query.Vector, tokens, err = s.Knowledge().embedBotQuery(ctx, b, q.Query); err != nil {
		return nil, err
	}
	s.Knowledge().meterEmbedding(ctx, b.TenantID, "", p.KeyID, tokens)
	results, err := s.searcher.get(ctx, s).Search(ctx, b.TenantID, b.ID, query)
	if err != nil {
		return nil, s.storeErr(ctx, "search knowledge base", "knowledge base", "", err)
	}
	return results, nil
}

// Stats counts every tenant's knowledge sources by status and
// their chunks, for the metrics; not a tenant's to ask.
func (k Knowledge) Stats(ctx context.Context) (store.KnowledgeStats, error) {
	s := k.svc
	st, err := s.store.KnowledgeJobs().Stats(ctx)
	if err != nil {
		return st, s.internal(ctx, "knowledge stats", err)
	}
	return st, nil
}
