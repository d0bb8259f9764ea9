package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/platform"
)

// The files of a knowledge base directory, tenants/<slug>/knowledge/<kb>/,
// that are not its documents.
const (
	knowledgeFileName = "knowledge.json"
	sourcesFileName   = "sources.json"
)

// maxSourceFile is the largest document the API takes in one upload
// (docs/knowledge.md, "Limits").
const maxSourceFile = 50 << 20

// The kinds of source apply manages, as the API names them.
const (
	kindFile    = "file"
	kindURL     = "url"
	kindSitemap = "sitemap"
)

// knowledgeFile is a base's optional knowledge.json: its name and
// embedding model, and the title and tags of its files.
type knowledgeFile struct {
	// Name defaults to the directory's name, which is the base's slug.
	Name string `json:"name,omitempty"`
	// Embedding is fixed when the base is created: without one the base
	// is searched by keyword only.
	Embedding *embeddingFile `json:"embedding,omitempty"`
	// Files gives documents of the directory a title and tags, by file
	// name.
	Files map[string]fileSourceFile `json:"files,omitempty"`
}

// embeddingFile names an embedding model of one of the tenant's
// providers.
type embeddingFile struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

type fileSourceFile struct {
	// Title defaults to the file name.
	Title string   `json:"title,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// sourcesFile is a base's optional sources.json: the pages it indexes.
type sourcesFile struct {
	Sources []webSourceFile `json:"sources"`
}

// webSourceFile is one url or sitemap source: exactly one of URL and
// Sitemap.
type webSourceFile struct {
	URL     string   `json:"url,omitempty"`
	Sitemap string   `json:"sitemap,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	// Refresh fetches the page again that often ("24h"); empty never.
	Refresh string `json:"refresh,omitempty"`
}

// knowledgeSpec is the tenant's checked knowledge/ directory; bases is
// empty when the directory has none, and the whole spec nil when there
// is no knowledge/ directory (then apply leaves the tenant's bases
// alone, even with --prune).
type knowledgeSpec struct {
	dir   string
	bases []baseSpec
}

// baseSpec is one checked knowledge base directory.
type baseSpec struct {
	dir, slug, name string
	// file is knowledge.json's path, where a base's problems are
	// reported even when it has none.
	file      string
	embedding *embeddingFile
	sources   []sourceSpec
}

// sourceSpec is one checked source: a document of the directory, or an
// entry of sources.json.
type sourceSpec struct {
	// file is where the source comes from: the document, or sources.json.
	file string
	kind string
	// name is what the output calls it: the file name, or the URL.
	name string
	// A document's: its name, size and content hash (sha256:..., as the
	// platform computes it); the content is read again when uploaded.
	filename string
	size     int64
	hash     string
	title    string
	// A page's.
	url     string
	refresh time.Duration
	tags    []string
}

// readKnowledge reads and checks dir/knowledge/, when there is one.
func readKnowledge(dir string) (*knowledgeSpec, []Problem) {
	root := filepath.Join(dir, "knowledge")
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{{root, "-", err.Error()}}
	}
	k := &knowledgeSpec{dir: root}
	var ps []Problem
	for _, e := range entries {
		path := filepath.Join(root, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case !e.IsDir():
			ps = append(ps, Problem{path, "-", "knowledge/ holds one directory per knowledge base, named after its slug"})
		default:
			b, bps := readBase(path)
			k.bases = append(k.bases, b)
			ps = append(ps, bps...)
		}
	}
	return k, ps
}

// readBase reads one knowledge base directory: knowledge.json and
// sources.json when present, and every other file as a document.
func readBase(dir string) (baseSpec, []Problem) {
	b := baseSpec{dir: dir, slug: filepath.Base(dir), file: filepath.Join(dir, knowledgeFileName)}
	var ps []Problem
	if !platform.ValidSlug(b.slug) {
		ps = append(ps, Problem{dir, "-", "the directory name is the knowledge base's slug: 1-63 lowercase letters, digits or hyphens"})
	}
	var kf knowledgeFile
	if _, err := os.Stat(b.file); err == nil {
		if err := readStrictJSON(b.file, &kf); err != nil {
			ps = append(ps, Problem{b.file, "-", strings.Replace(err.Error(), "tenant file", "knowledge file", 1)})
		}
	}
	b.name, b.embedding = strings.TrimSpace(kf.Name), kf.Embedding
	if b.name == "" {
		b.name = b.slug
	}
	if len(b.name) > platform.MaxKnowledgeName {
		ps = append(ps, Problem{b.file, "/name", fmt.Sprintf("must be at most %d bytes", platform.MaxKnowledgeName)})
	}
	if e := b.embedding; e != nil && (e.Provider == "" || e.Model == "") {
		ps = append(ps, Problem{b.file, "/embedding", "name both the provider (one of the tenant's) and its embedding model"})
	}
	docs, dps := readDocuments(dir, kf.Files)
	ps = append(ps, dps...)
	pages, pps := readSources(filepath.Join(dir, sourcesFileName))
	ps = append(ps, pps...)
	b.sources = append(docs, pages...)
	return b, ps
}

// readDocuments hashes each document of a base directory. Two documents
// with the same content would be one source (a base holds each content
// once), so that is a problem.
func readDocuments(dir string, meta map[string]fileSourceFile) ([]sourceSpec, []Problem) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []Problem{{dir, "-", err.Error()}}
	}
	var specs []sourceSpec
	var ps []Problem
	byHash := map[string]string{}
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(name, ".") || name == knowledgeFileName || name == sourcesFileName:
			continue
		case e.IsDir():
			ps = append(ps, Problem{path, "-", "a knowledge base directory holds documents, not directories"})
			continue
		}
		s := sourceSpec{file: path, kind: kindFile, name: name, filename: name}
		var err error
		if s.size, s.hash, err = hashFile(path); err != nil {
			ps = append(ps, Problem{path, "-", err.Error()})
			continue
		}
		switch {
		case s.size == 0:
			ps = append(ps, Problem{path, "-", "the document is empty"})
		case s.size > maxSourceFile:
			ps = append(ps, Problem{path, "-", "a document may be at most 50 MB; split it, or add it by url in sources.json"})
		case byHash[s.hash] != "":
			ps = append(ps, Problem{path, "-", "the same content as " + byHash[s.hash] + "; a base holds each content once: remove one"})
		}
		byHash[s.hash] = name
		m := meta[name]
		s.title, s.tags = strings.TrimSpace(m.Title), m.Tags
		if utf8.RuneCountInString(s.title) > platform.MaxSourceTitle {
			ps = append(ps, Problem{filepath.Join(dir, knowledgeFileName), "/files/" + name + "/title", fmt.Sprintf("must be at most %d characters", platform.MaxSourceTitle)})
		}
		ps = append(ps, checkTags(filepath.Join(dir, knowledgeFileName), "/files/"+name+"/tags", m.Tags, true)...)
		specs = append(specs, s)
	}
	for _, name := range sortedKeys(meta) {
		if !slices.ContainsFunc(specs, func(s sourceSpec) bool { return s.filename == name }) {
			ps = append(ps, Problem{filepath.Join(dir, knowledgeFileName), "/files/" + name, fmt.Sprintf("%q is not a document of this directory", name)})
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].name < specs[j].name })
	return specs, ps
}

// hashFile returns a file's size and content hash as the platform writes
// it, reading it in pieces.
func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// readSources reads and checks a base's sources.json, when there is one.
func readSources(path string) ([]sourceSpec, []Problem) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, nil
	}
	var sf sourcesFile
	if err := readStrictJSON(path, &sf); err != nil {
		return nil, []Problem{{path, "-", strings.Replace(err.Error(), "tenant file", "sources file", 1)}}
	}
	l := &problemList{file: path}
	var specs []sourceSpec
	seen := map[string]bool{}
	for i, w := range sf.Sources {
		at := fmt.Sprintf("/sources/%d", i)
		s := sourceSpec{file: path, kind: kindURL, url: w.URL, tags: w.Tags}
		switch {
		case (w.URL == "") == (w.Sitemap == ""):
			l.add(at, "give exactly one of url and sitemap")
			continue
		case w.Sitemap != "":
			s.kind, s.url = kindSitemap, w.Sitemap
		}
		s.name = s.url
		if !strings.HasPrefix(s.url, "https://") && !strings.HasPrefix(s.url, "http://") {
			l.add(at+"/"+s.kind, "must be an absolute http or https URL")
		}
		if seen[s.kind+" "+s.url] {
			l.add(at+"/"+s.kind, "is listed twice")
		}
		seen[s.kind+" "+s.url] = true
		if w.Refresh != "" {
			d, err := time.ParseDuration(w.Refresh)
			switch {
			case err != nil:
				l.add(at+"/refresh", "must be a duration like \"24h\"")
			case d < platform.MinSourceRefresh:
				l.add(at+"/refresh", "must be at least %s", platform.MinSourceRefresh)
			}
			s.refresh = d
		}
		l.ps = append(l.ps, checkTags(path, at+"/tags", w.Tags, false)...)
		specs = append(specs, s)
	}
	return specs, l.ps
}

// checkTags checks a source's tags as the platform does. A document's
// tags travel as form fields that the server splits at commas, so they
// may hold none.
func checkTags(file, at string, tags []string, noCommas bool) []Problem {
	var ps []Problem
	if len(tags) > platform.MaxSourceTags {
		ps = append(ps, Problem{file, at, fmt.Sprintf("must hold at most %d tags", platform.MaxSourceTags)})
	}
	for i, tag := range tags {
		ptr := fmt.Sprintf("%s/%d", at, i)
		switch {
		case tag == "" || len(tag) > platform.MaxSourceTag || strings.TrimSpace(tag) != tag:
			ps = append(ps, Problem{file, ptr, fmt.Sprintf("must be 1-%d bytes without surrounding spaces", platform.MaxSourceTag)})
		case noCommas && strings.Contains(tag, ","):
			ps = append(ps, Problem{file, ptr, "a document's tag may not hold a comma"})
		}
	}
	return ps
}
