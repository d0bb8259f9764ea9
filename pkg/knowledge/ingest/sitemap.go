package ingest

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"golang.org/x/net/html/charset"
)

// MaxSitemapFiles bounds the sitemap files one sitemap source reads:
// its own and those a sitemap index lists. A tenant's page limit is
// reached long before the protocol's 50,000 files of 50,000 pages.
const MaxSitemapFiles = 50

// sitemapRead is what reading a sitemap's files found so far. Pages past
// limit are counted, not kept, so a sitemap of any size costs at most
// limit URLs of memory.
type sitemapRead struct {
	limit int
	pages []string
	seen  map[string]bool
	total int  // <url> entries read, past the limit too
	cut   bool // files left unread once the limit was reached
}

// indexSitemap reads the sitemap src (following a sitemap index), checks
// each page it lists against the outbound policy and robots.txt, and
// makes the pages sources of src (see store.KnowledgeJobs.DoneSitemap).
func (w *Worker) indexSitemap(ctx context.Context, src *store.KnowledgeSource) error {
	lim, err := w.st.Tenant(src.TenantID).Knowledge().Limits(ctx)
	if err != nil {
		return fmt.Errorf("read the tenant's knowledge limits: %w", err)
	}
	r := &sitemapRead{limit: int(*lim.MaxSitemapPages), seen: map[string]bool{}}
	queue, files := []string{src.URL}, 0
	for len(queue) > 0 {
		if files == MaxSitemapFiles || len(r.pages) >= r.limit {
			r.cut = true
			break
		}
		next := queue[0]
		queue = queue[1:]
		files++
		more, err := w.readSitemap(ctx, next, r)
		if err != nil {
			return err
		}
		queue = append(queue, more...)
	}
	var warning string
	switch {
	case r.total > len(r.pages) && r.total > r.limit:
		warning = fmt.Sprintf("the sitemap lists %d pages; only the first %d are indexed (the tenant's limit of %d pages per sitemap)", r.total, r.limit, r.limit)
	case r.cut && len(r.pages) >= r.limit:
		warning = fmt.Sprintf("the sitemap lists more than %d pages; only the first %d are indexed (the tenant's limit of %d pages per sitemap)", r.limit, r.limit, r.limit)
	case r.cut:
		warning = fmt.Sprintf("the sitemap index lists more than %d sitemaps; only the first %d are read", MaxSitemapFiles, MaxSitemapFiles)
	case len(r.pages) == 0:
		warning = "the sitemap lists no pages"
	}
	pages := make([]store.SitemapPage, len(r.pages))
	denied := map[string]string{} // per host: why the policy refuses it
	for i, page := range r.pages {
		pages[i] = store.SitemapPage{URL: page, Skipped: w.skipPage(ctx, page, denied)}
	}
	return w.jobs.DoneSitemap(ctx, src, pages, warning)
}

// skipPage says why a page a sitemap lists is not fetched: not an http
// URL, a destination the outbound policy refuses, a path robots.txt
// disallows; "" to fetch it. A robots.txt that cannot be read now is
// left to the page's own fetch.
func (w *Worker) skipPage(ctx context.Context, page string, denied map[string]string) string {
	u, err := url.Parse(page)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "not an absolute http or https URL without credentials"
	}
	reason, checked := denied[u.Host]
	if !checked {
		if err := outbound.CheckURL(ctx, w.opts.Outbound, outbound.Options{}, page); err != nil {
			reason = "not fetched: " + outbound.CleanError(err).Error()
		}
		denied[u.Host] = reason
	}
	if reason != "" {
		return reason
	}
	var p *permanentError
	if err := w.robotsAllowed(ctx, page); errors.As(err, &p) {
		return p.msg
	}
	return ""
}

// readSitemap reads one sitemap file into r and returns the sitemaps it
// lists when it is a sitemap index. A gzipped file is unpacked, and no
// file may unpack to more than Limits.MaxBytes: a gzip bomb stops there.
func (w *Worker) readSitemap(ctx context.Context, raw string, r *sitemapRead) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, permanent("the sitemap URL %s cannot be requested: %v", outbound.StripURL(raw), err)
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, application/gzip;q=0.8, */*;q=0.5")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fetchError(raw, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		return nil, fmt.Errorf("fetching %s: the server answered %s", outbound.StripURL(raw), resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, permanent("fetching %s: the server answered %s; check the URL", outbound.StripURL(raw), resp.Status)
	}
	limit := w.opts.Limits.MaxBytes
	if limit <= 0 {
		limit = 50 << 20
	}
	body := bufio.NewReader(&capped{r: resp.Body, left: limit, what: "the sitemap " + outbound.StripURL(raw), limit: limit})
	var in io.Reader = body
	if magic, _ := body.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(body)
		if err != nil {
			return nil, permanent("the sitemap %s is not valid gzip: %v", outbound.StripURL(raw), err)
		}
		defer gz.Close()
		in = &capped{r: gz, left: limit, what: "the sitemap " + outbound.StripURL(raw), limit: limit, unpacked: true}
	}
	more, err := parseSitemap(in, r)
	var tooBig *tooBigError
	switch {
	case errors.As(err, &tooBig):
		return nil, permanent("%s", tooBig.Error())
	case err != nil:
		return nil, permanent("the sitemap %s cannot be read: %v", outbound.StripURL(raw), err)
	}
	return more, nil
}

// parseSitemap streams a <urlset> into r, or returns the <loc>s of a
// <sitemapindex>.
func parseSitemap(in io.Reader, r *sitemapRead) ([]string, error) {
	dec := xml.NewDecoder(in)
	dec.CharsetReader = charset.NewReaderLabel
	var (
		root, parent string
		inLoc        bool
		loc          strings.Builder
		sitemaps     []string
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case root == "":
				root = t.Name.Local
				if root != "urlset" && root != "sitemapindex" {
					return nil, fmt.Errorf("it is not a sitemap: its root element is <%s>, not <urlset> or <sitemapindex>", root)
				}
			case t.Name.Local == "url" || t.Name.Local == "sitemap":
				parent = t.Name.Local
			case t.Name.Local == "loc" && parent != "":
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc && loc.Len() < 4096 {
				loc.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local != "loc" || !inLoc {
				continue
			}
			inLoc = false
			u := strings.TrimSpace(loc.String())
			switch {
			case u == "":
			case root == "sitemapindex" && parent == "sitemap":
				if len(sitemaps) < MaxSitemapFiles {
					sitemaps = append(sitemaps, u)
				}
			case root == "urlset" && parent == "url":
				r.total++
				if len(r.pages) < r.limit && !r.seen[u] {
					r.seen[u] = true
					r.pages = append(r.pages, u)
				}
			}
		}
	}
	if root == "" {
		return nil, errors.New("it is empty")
	}
	return sitemaps, nil
}

// capped reads r up to limit bytes, then fails with a tooBigError.
type capped struct {
	r        io.Reader
	left     int64
	limit    int64
	what     string
	unpacked bool
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more than the limit tells a file of exactly the limit
		// from a larger one.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, &tooBigError{what: c.what, limit: c.limit, unpacked: c.unpacked}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

type tooBigError struct {
	what     string
	limit    int64
	unpacked bool
}

func (e *tooBigError) Error() string {
	if e.unpacked {
		return fmt.Sprintf("%s unpacks to more than %d bytes: it is not read", e.what, e.limit)
	}
	return fmt.Sprintf("%s is larger than %d bytes: it is not read", e.what, e.limit)
}
