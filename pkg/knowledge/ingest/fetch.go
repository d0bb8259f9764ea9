package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
)

// page is one fetched web page, or word that it has not changed.
type page struct {
	data         []byte
	contentType  string
	filename     string
	hash         string
	etag         string
	lastModified string
	unchanged    bool
}

// fetch reads a url source's page through the outbound client, asking
// the server whether it changed when the source's chunks are in the
// generation being written (a reindex needs the content again).
func (w *Worker) fetch(ctx context.Context, src *store.KnowledgeSource, conditional bool) (*page, error) {
	if err := w.robotsAllowed(ctx, src.URL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return nil, permanent("the URL cannot be requested: %v", err)
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "text/html, text/markdown, text/plain;q=0.9, application/pdf;q=0.8, */*;q=0.5")
	if conditional {
		if src.ETag != "" {
			req.Header.Set("If-None-Match", src.ETag)
		}
		if src.LastModified != "" {
			req.Header.Set("If-Modified-Since", src.LastModified)
		}
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fetchError(src.URL, err)
	}
	defer resp.Body.Close()
	p := &page{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
	switch {
	case resp.StatusCode == http.StatusNotModified && conditional:
		p.unchanged, p.hash = true, src.ContentHash
		return p, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		return nil, fmt.Errorf("fetching %s: the server answered %s", outbound.StripURL(src.URL), resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, permanent("fetching %s: the server answered %s; check the URL", outbound.StripURL(src.URL), resp.Status)
	}
	limit := w.opts.Limits.MaxBytes
	if limit <= 0 {
		limit = 50 << 20
	}
	body, truncated, err := outbound.ReadBody(resp.Body, limit)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", outbound.StripURL(src.URL), err)
	}
	if truncated {
		return nil, permanent("fetching %s: the page is larger than %d bytes", outbound.StripURL(src.URL), limit)
	}
	sum := sha256.Sum256(body)
	p.data, p.hash = body, "sha256:"+hex.EncodeToString(sum[:])
	p.contentType = resp.Header.Get("Content-Type")
	p.filename = path.Base(resp.Request.URL.Path)
	if p.filename == "/" || p.filename == "." || !strings.Contains(p.filename, ".") {
		p.filename = ""
	}
	if conditional && p.hash == src.ContentHash {
		p.unchanged = true // no validators, but the same bytes
	}
	return p, nil
}

// fetchError words a failed request: one the outbound policy refused is
// permanent, anything else (a timeout, a refused connection) transient.
func fetchError(raw string, err error) error {
	var denied *outbound.DeniedError
	var redirect *outbound.RedirectError
	if errors.As(err, &denied) || errors.As(err, &redirect) {
		return permanent("fetching %s: %v", outbound.StripURL(raw), outbound.CleanError(err))
	}
	return fmt.Errorf("fetching %s: %w", outbound.StripURL(raw), outbound.CleanError(err))
}
