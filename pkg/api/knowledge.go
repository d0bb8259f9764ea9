package api

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// Knowledge bases, their sources and searches (docs/knowledge.md).

// MaxSourceUpload caps the body of a new source, a file upload above
// all: larger documents are refused with 413 as soon as the body passes
// it (or at once, when Content-Length says so), never read whole.
const MaxSourceUpload = 50 << 20

// sourcesRoute is addSource's route, which bounds its own body
// (MaxSourceUpload instead of the server's limit).
const sourcesRoute = "/v1/tenants/:tenant/knowledge-bases/:kb/sources"

// createKnowledgeBase: POST /v1/tenants/{tenant}/knowledge-bases.
func (s *server) createKnowledgeBase(c *gin.Context) {
	var req apiclient.CreateKnowledgeBaseRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	in := platform.KnowledgeBaseInput{Name: req.Name, Slug: req.Slug}
	if req.Embedding != nil {
		in.EmbeddingProvider, in.EmbeddingModel = req.Embedding.Provider, req.Embedding.Model
	}
	b, err := s.platform.Knowledge().CreateBase(c.Request.Context(), principal(c), c.Param("tenant"), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, knowledgeBaseOut(b))
}

// listKnowledgeBases: GET /v1/tenants/{tenant}/knowledge-bases.
func (s *server) listKnowledgeBases(c *gin.Context) {
	bs, err := s.platform.Knowledge().ListBases(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.KnowledgeBaseList{KnowledgeBases: mapAll(bs, knowledgeBaseOut)})
}

// getKnowledgeBase: GET /v1/tenants/{tenant}/knowledge-bases/{kb}.
func (s *server) getKnowledgeBase(c *gin.Context) {
	b, err := s.platform.Knowledge().GetBase(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, knowledgeBaseOut(b))
}

// updateKnowledgeBase: PATCH /v1/tenants/{tenant}/knowledge-bases/{kb}.
func (s *server) updateKnowledgeBase(c *gin.Context) {
	var req apiclient.UpdateKnowledgeBaseRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	ctx, p, tenant, kb := c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb")
	var b store.KnowledgeBase
	var err error
	if req.Name != nil {
		b, err = s.platform.Knowledge().RenameBase(ctx, p, tenant, kb, *req.Name)
	} else {
		b, err = s.platform.Knowledge().GetBase(ctx, p, tenant, kb)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, knowledgeBaseOut(b))
}

// deleteKnowledgeBase: DELETE /v1/tenants/{tenant}/knowledge-bases/{kb}.
func (s *server) deleteKnowledgeBase(c *gin.Context) {
	if err := s.platform.Knowledge().DeleteBase(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// reindexKnowledgeBase: POST /v1/tenants/{tenant}/knowledge-bases/{kb}/reindex.
func (s *server) reindexKnowledgeBase(c *gin.Context) {
	b, err := s.platform.Knowledge().ReindexBase(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, knowledgeBaseOut(b))
}

// addSource: POST /v1/tenants/{tenant}/knowledge-bases/{kb}/sources, a
// multipart upload (a "file" part; "title", "tags" and "refresh" fields)
// or a JSON object with one of url, sitemap, text, qa. 201 with a new
// source, 200 with the one already holding the same content.
func (s *server) addSource(c *gin.Context) {
	if c.Request.ContentLength > MaxSourceUpload {
		writeError(c, tooLarge())
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxSourceUpload)
	in, err := sourceInput(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	src, created, err := s.platform.Knowledge().AddSource(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.JSON(status, sourceOut(src))
}

func tooLarge() *apiclient.Error {
	return &apiclient.Error{Code: apiclient.CodeTooLarge,
		Message: "a source may be at most 50 MB; split the document, or add it by url"}
}

// sourceInput reads a new source from a multipart upload or a JSON body.
func sourceInput(c *gin.Context) (platform.SourceInput, error) {
	mediaType, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if mediaType == "multipart/form-data" {
		return fileSourceInput(c)
	}
	var req apiclient.AddSourceRequest
	if err := decodeJSON(c, &req); err != nil {
		return platform.SourceInput{}, err
	}
	in := platform.SourceInput{Title: req.Title, Tags: req.Tags, Refresh: req.Refresh}
	var kinds []string
	if req.URL != "" {
		in.Kind, in.URL, kinds = store.SourceURL, req.URL, append(kinds, "url")
	}
	if req.Sitemap != "" {
		in.Kind, in.URL, kinds = store.SourceSitemap, req.Sitemap, append(kinds, "sitemap")
	}
	if req.Text != "" {
		in.Kind, in.Content, kinds = store.SourceText, []byte(req.Text), append(kinds, "text")
	}
	if req.QA != nil {
		in.Kind, kinds = store.SourceQA, append(kinds, "qa")
		in.QA = make([]platform.QAPair, len(req.QA))
		for i, qa := range req.QA {
			in.QA[i] = platform.QAPair(qa)
		}
	}
	if len(kinds) > 1 {
		return in, badRequest("/"+kinds[1], "a source is one of url, sitemap, text, qa; this body also has "+kinds[0])
	}
	return in, nil
}

// fileSourceInput streams a multipart upload: its "file" part is read up
// to MaxSourceUpload, other parts are small fields.
func fileSourceInput(c *gin.Context) (platform.SourceInput, error) {
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return platform.SourceInput{}, badRequest("", "multipart body: "+err.Error())
	}
	in := platform.SourceInput{Kind: store.SourceFile}
	seen := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return in, uploadError(err)
		}
		name := part.FormName()
		if name == "file" {
			if seen {
				return in, badRequest("/file", "send one file per request")
			}
			seen = true
			in.Filename, in.ContentType = part.FileName(), part.Header.Get("Content-Type")
			if in.Content, err = io.ReadAll(part); err != nil {
				return in, uploadError(err)
			}
			continue
		}
		value, err := io.ReadAll(io.LimitReader(part, 64<<10))
		if err != nil {
			return in, uploadError(err)
		}
		switch name {
		case "title":
			in.Title = string(value)
		case "refresh":
			in.Refresh = string(value)
		case "tags":
			for _, tag := range strings.Split(string(value), ",") {
				in.Tags = append(in.Tags, strings.TrimSpace(tag))
			}
		default:
			return in, badRequest("/"+name, "unknown field; a file upload has file, title, tags and refresh")
		}
	}
	if !seen {
		return in, badRequest("/file", "is required in a multipart upload")
	}
	return in, nil
}

func uploadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLarge()
	}
	return badRequest("", "multipart body: "+err.Error())
}

// listSources: GET /v1/tenants/{tenant}/knowledge-bases/{kb}/sources.
func (s *server) listSources(c *gin.Context) {
	srcs, err := s.platform.Knowledge().ListSources(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.KnowledgeSourceList{Sources: mapAll(srcs, sourceOut)})
}

// getSource: GET /v1/tenants/{tenant}/knowledge-bases/{kb}/sources/{source}.
func (s *server) getSource(c *gin.Context) {
	src, err := s.platform.Knowledge().GetSource(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"), c.Param("source"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, sourceOut(src))
}

// deleteSource: DELETE /v1/tenants/{tenant}/knowledge-bases/{kb}/sources/{source}.
func (s *server) deleteSource(c *gin.Context) {
	if err := s.platform.Knowledge().DeleteSource(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"), c.Param("source")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// refreshSource: POST /v1/tenants/{tenant}/knowledge-bases/{kb}/sources/{source}/refresh.
func (s *server) refreshSource(c *gin.Context) {
	src, err := s.platform.Knowledge().RefreshSource(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"), c.Param("source"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, sourceOut(src))
}

// sourceChunks: GET /v1/tenants/{tenant}/knowledge-bases/{kb}/sources/{source}/chunks.
func (s *server) sourceChunks(c *gin.Context) {
	chunks, err := s.platform.Knowledge().SourceChunks(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"), c.Param("source"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.KnowledgeChunkList{Chunks: mapAll(chunks, func(ch store.KnowledgeChunk) apiclient.KnowledgeChunk {
		return apiclient.KnowledgeChunk{Chunk: ch.Ordinal, Title: ch.Title, Locator: ch.Locator, Text: ch.Text, Tokens: ch.Tokens}
	})})
}

// searchKnowledge: POST /v1/tenants/{tenant}/knowledge-bases/{kb}/search.
func (s *server) searchKnowledge(c *gin.Context) {
	var req apiclient.SearchKnowledgeRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	results, err := s.platform.Knowledge().Search(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("kb"),
		platform.KnowledgeQuery{Query: req.Query, TopK: req.TopK, Tags: req.Tags})
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.KnowledgeSearchResults{Results: make([]apiclient.KnowledgeResult, len(results))}
	for i, r := range results {
		out.Results[i] = apiclient.KnowledgeResult{Source: r.Source, Title: r.Title, URL: r.URL, Locator: r.Locator, Chunk: r.Chunk,
			Text: r.Text, Score: r.Score, KeywordRank: r.KeywordRank, VectorRank: r.VectorRank}
	}
	c.JSON(http.StatusOK, out)
}

func knowledgeBaseOut(b store.KnowledgeBase) apiclient.KnowledgeBase {
	out := apiclient.KnowledgeBase{ID: b.ID, Slug: b.Slug, Name: b.Name, Generation: b.Generation, Building: b.Building,
		CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
	if b.EmbeddingModel != "" {
		out.Embedding = &apiclient.Embedding{Provider: b.EmbeddingProvider, Model: b.EmbeddingModel}
	}
	return out
}

func sourceOut(src store.KnowledgeSource) apiclient.KnowledgeSource {
	out := apiclient.KnowledgeSource{ID: src.ID, Kind: src.Kind, Title: src.Title, URL: src.URL, Filename: src.Filename,
		Tags: src.Tags, Parent: src.ParentID, Status: src.Status, Error: src.Error, Warning: src.Warning, Chunks: src.Chunks, Pages: src.Pages, IndexedAt: src.IndexedAt,
		ContentHash: src.ContentHash, Bytes: src.Bytes, CreatedAt: src.CreatedAt}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if src.RefreshSeconds > 0 {
		out.Refresh = (time.Duration(src.RefreshSeconds) * time.Second).String()
	}
	return out
}

// knowledgeFile: GET /v1/knowledge/files/{token}, the uploaded file a
// citation's signed link names. A PDF opens in the browser (so the
// link's #page=N works); any other file downloads, and nothing it holds
// runs as this server's page.
func (s *server) knowledgeFile(c *gin.Context) {
	f, err := s.platform.Knowledge().OpenFile(c.Request.Context(), c.Param("token"))
	if err != nil {
		s.fail(c, err)
		return
	}
	disposition := "attachment"
	if mt, _, _ := mime.ParseMediaType(f.ContentType); mt == "application/pdf" {
		disposition = "inline"
	} else {
		c.Header("Content-Security-Policy", "sandbox")
	}
	c.Header("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": f.Filename}))
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Cache-Control", "private, no-store")
	c.Data(http.StatusOK, f.ContentType, f.Content)
}
