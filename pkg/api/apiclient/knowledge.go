package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"time"
)

// KnowledgeBase is a tenant's collection of documents a bot answers from
// (docs/knowledge.md).
type KnowledgeBase struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	// Embedding is the model the base's chunks are embedded by; nil
	// searches by keyword only.
	Embedding *Embedding `json:"embedding,omitempty"`
	// Generation is the index generation searches read; Building the one a
	// reindex is writing (0: none).
	Generation int64     `json:"generation"`
	Building   int64     `json:"building,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Embedding names an embedding model of a tenant's provider.
type Embedding struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// CreateKnowledgeBaseRequest is the body of POST .../knowledge-bases.
type CreateKnowledgeBaseRequest struct {
	Name string `json:"name"`
	// Slug defaults to one made from the name.
	Slug      string     `json:"slug,omitempty"`
	Embedding *Embedding `json:"embedding,omitempty"`
}

// UpdateKnowledgeBaseRequest is the body of PATCH .../knowledge-bases/{kb}.
type UpdateKnowledgeBaseRequest struct {
	Name *string `json:"name,omitempty"`
}

// KnowledgeBaseList is the body of GET .../knowledge-bases.
type KnowledgeBaseList struct {
	KnowledgeBases []KnowledgeBase `json:"knowledge_bases"`
}

// KnowledgeSource is one document of a base and where its indexing is.
type KnowledgeSource struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Title    string   `json:"title"`
	URL      string   `json:"url"`
	Filename string   `json:"filename"`
	Tags     []string `json:"tags"`
	// Parent is the sitemap source that listed this page; empty for a
	// source of its own.
	Parent string `json:"parent,omitempty"`
	// Status is queued, indexing, ready or failed (Error says why).
	Status string `json:"status"`
	Error  string `json:"error"`
	// Warning is what a source that did not fail should still say: a
	// sitemap cut at the tenant's limit of pages.
	Warning     string     `json:"warning,omitempty"`
	Chunks      int        `json:"chunks"`
	Pages       int        `json:"pages"`
	IndexedAt   *time.Time `json:"indexed_at"`
	ContentHash string     `json:"content_hash"`
	Bytes       int64      `json:"bytes"`
	// Refresh is how often a url or sitemap source is fetched again
	// ("24h0m0s"); empty never.
	Refresh   string    `json:"refresh,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// AddSourceRequest is the JSON body of POST .../knowledge-bases/{kb}/sources:
// exactly one of URL, Sitemap, Text, QA (a file is sent as multipart, see
// AddFileSource).
type AddSourceRequest struct {
	URL     string   `json:"url,omitempty"`
	Sitemap string   `json:"sitemap,omitempty"`
	Text    string   `json:"text,omitempty"`
	Title   string   `json:"title,omitempty"`
	QA      []QAPair `json:"qa,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	// Refresh re-fetches a url or sitemap source that often ("24h").
	Refresh string `json:"refresh,omitempty"`
}

// QAPair is one question with its answer.
type QAPair struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// KnowledgeSourceList is the body of GET .../sources.
type KnowledgeSourceList struct {
	Sources []KnowledgeSource `json:"sources"`
}

// KnowledgeChunk is one searchable piece of a source.
type KnowledgeChunk struct {
	// Chunk is the chunk's place in its source, from 0.
	Chunk   int    `json:"chunk"`
	Title   string `json:"title,omitempty"`
	Locator string `json:"locator,omitempty"`
	Text    string `json:"text"`
	Tokens  int    `json:"tokens"`
}

// KnowledgeChunkList is the body of GET .../sources/{source}/chunks.
type KnowledgeChunkList struct {
	Chunks []KnowledgeChunk `json:"chunks"`
}

// SearchKnowledgeRequest is the body of POST .../knowledge-bases/{kb}/search.
type SearchKnowledgeRequest struct {
	Query string `json:"query"`
	// TopK bounds the results: 5 when 0, at most 50.
	TopK int `json:"top_k,omitempty"`
	// Tags keeps chunks of sources carrying at least one of them.
	Tags []string `json:"tags,omitempty"`
}

// KnowledgeResult is one chunk a search found.
type KnowledgeResult struct {
	Source  string `json:"source"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	Locator string `json:"locator"`
	Chunk   int    `json:"chunk"`
	Text    string `json:"text"`
	// Score is the fused score, 0..1.
	Score float64 `json:"score"`
	// KeywordRank and VectorRank are the chunk's places, from 1, in the
	// keyword and the vector search; 0 where that search did not find it.
	KeywordRank int `json:"keyword_rank"`
	VectorRank  int `json:"vector_rank"`
}

// KnowledgeSearchResults is the answer of a search.
type KnowledgeSearchResults struct {
	Results []KnowledgeResult `json:"results"`
}

// CreateKnowledgeBase adds a knowledge base.
func (c *Client) CreateKnowledgeBase(ctx context.Context, tenant string, req CreateKnowledgeBaseRequest) (*KnowledgeBase, error) {
	var out KnowledgeBase
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "knowledge-bases"), req, &out)
}

// ListKnowledgeBases lists a tenant's knowledge bases.
func (c *Client) ListKnowledgeBases(ctx context.Context, tenant string) (*KnowledgeBaseList, error) {
	var out KnowledgeBaseList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "knowledge-bases"), nil, &out)
}

// GetKnowledgeBase returns one knowledge base (id or slug).
func (c *Client) GetKnowledgeBase(ctx context.Context, tenant, kb string) (*KnowledgeBase, error) {
	var out KnowledgeBase
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "knowledge-bases", kb), nil, &out)
}

// UpdateKnowledgeBase renames a knowledge base.
func (c *Client) UpdateKnowledgeBase(ctx context.Context, tenant, kb string, req UpdateKnowledgeBaseRequest) (*KnowledgeBase, error) {
	var out KnowledgeBase
	return &out, c.Do(ctx, http.MethodPatch, tenantPath(tenant, "knowledge-bases", kb), req, &out)
}

// DeleteKnowledgeBase deletes a knowledge base with everything in it.
func (c *Client) DeleteKnowledgeBase(ctx context.Context, tenant, kb string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "knowledge-bases", kb), nil, nil)
}

// ReindexKnowledgeBase starts a new index generation of a base.
func (c *Client) ReindexKnowledgeBase(ctx context.Context, tenant, kb string) (*KnowledgeBase, error) {
	var out KnowledgeBase
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "knowledge-bases", kb, "reindex"), nil, &out)
}

// AddSource queues a url, sitemap, text or questions-and-answers source.
// created is false when the base already held the same content: the
// source is that one.
func (c *Client) AddSource(ctx context.Context, tenant, kb string, req AddSourceRequest) (src *KnowledgeSource, created bool, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, false, fmt.Errorf("apiclient: encode source: %w", err)
	}
	return c.addSource(ctx, tenant, kb, "application/json", bytes.NewReader(body))
}

// AddFileSource uploads a file as a source, with optional tags and title.
func (c *Client) AddFileSource(ctx context.Context, tenant, kb, filename string, content io.Reader, tags []string, title string) (src *KnowledgeSource, created bool, err error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", filename)
	if err == nil {
		_, err = io.Copy(fw, content)
	}
	for _, tag := range tags {
		if err == nil {
			err = mw.WriteField("tags", tag)
		}
	}
	if err == nil && title != "" {
		err = mw.WriteField("title", title)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return nil, false, fmt.Errorf("apiclient: encode file: %w", err)
	}
	return c.addSource(ctx, tenant, kb, mw.FormDataContentType(), &buf)
}

func (c *Client) addSource(ctx context.Context, tenant, kb, contentType string, body io.Reader) (*KnowledgeSource, bool, error) {
	path := tenantPath(tenant, "knowledge-bases", kb, "sources")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, body)
	if err != nil {
		return nil, false, fmt.Errorf("apiclient: POST %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(HeaderCSRF, "1")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("apiclient: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil, false, decodeError(resp)
	}
	var out KnowledgeSource
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, false, fmt.Errorf("apiclient: decode POST %s: %w", path, err)
	}
	return &out, resp.StatusCode == http.StatusCreated, nil
}

// ListSources lists a base's sources, oldest first.
func (c *Client) ListSources(ctx context.Context, tenant, kb string) (*KnowledgeSourceList, error) {
	var out KnowledgeSourceList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "knowledge-bases", kb, "sources"), nil, &out)
}

// GetSource returns one source.
func (c *Client) GetSource(ctx context.Context, tenant, kb, source string) (*KnowledgeSource, error) {
	var out KnowledgeSource
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "knowledge-bases", kb, "sources", source), nil, &out)
}

// DeleteSource deletes a source with its chunks.
func (c *Client) DeleteSource(ctx context.Context, tenant, kb, source string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "knowledge-bases", kb, "sources", source), nil, nil)
}

// RefreshSource queues a source to be indexed again now.
func (c *Client) RefreshSource(ctx context.Context, tenant, kb, source string) (*KnowledgeSource, error) {
	var out KnowledgeSource
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "knowledge-bases", kb, "sources", source, "refresh"), nil, &out)
}

// SourceChunks lists a source's chunks in order.
func (c *Client) SourceChunks(ctx context.Context, tenant, kb, source string) (*KnowledgeChunkList, error) {
	var out KnowledgeChunkList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "knowledge-bases", kb, "sources", source, "chunks"), nil, &out)
}

// SearchKnowledge searches a base.
func (c *Client) SearchKnowledge(ctx context.Context, tenant, kb string, req SearchKnowledgeRequest) (*KnowledgeSearchResults, error) {
	var out KnowledgeSearchResults
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "knowledge-bases", kb, "search"), req, &out)
}
