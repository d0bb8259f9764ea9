package apply

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// liveBase is a knowledge base as apply compares it.
type liveBase struct {
	slug, name string
	// embedding is nil for a base searched by keyword only.
	embedding *embeddingFile
}

// liveSource is a source of a base as apply compares it.
type liveSource struct {
	id, kind, title, filename, url, hash string
	tags                                 []string
	refresh                              time.Duration
}

// knowledge makes the tenant's knowledge bases match its knowledge/
// directory: missing bases are created, renamed ones renamed, and each
// base's sources made to match its documents and sources.json. With
// --prune, bases and sources the directory does not have are deleted. A
// tenant without a knowledge/ directory keeps its bases as they are, even
// with --prune: they may well be kept by hand, in the admin UI.
func (a *applier) knowledge(ctx context.Context, t Tenant, exists bool) {
	if t.knowledge == nil {
		return
	}
	live := map[string]liveBase{}
	if exists {
		bases, err := a.target.knowledgeBases(ctx, t.slug)
		if err != nil {
			a.fail(t.knowledge.dir, err)
			return
		}
		for _, b := range bases {
			live[b.slug] = b
		}
	}
	for _, b := range t.knowledge.bases {
		cur, ok := live[b.slug]
		a.knowledgeBase(ctx, t.slug, b, cur, ok)
	}
	if !a.prune {
		return
	}
	for _, slug := range sortedKeys(live) {
		if !slices.ContainsFunc(t.knowledge.bases, func(b baseSpec) bool { return b.slug == slug }) {
			a.remove(t.knowledge.dir, "knowledge base "+slug, func() error { return a.target.deleteKnowledgeBase(ctx, t.slug, slug) })
		}
	}
}

// knowledgeBase creates or renames one base, then applies its sources.
func (a *applier) knowledgeBase(ctx context.Context, tenant string, b baseSpec, live liveBase, exists bool) {
	what := "knowledge base " + b.slug
	switch {
	case exists && describeEmbedding(live.embedding) != describeEmbedding(b.embedding):
		a.fail(b.file, fmt.Errorf("the base embeds with %s; a base's embedding cannot change: delete the base (or apply with --prune after renaming its directory) and apply again",
			describeEmbedding(live.embedding)))
		return
	case exists && live.name != b.name:
		a.stats.Changed++
		if a.dryRun {
			fmt.Fprintf(a.out, "  %s: would be renamed %q\n", what, b.name)
			break
		}
		if err := a.target.renameKnowledgeBase(ctx, tenant, b.slug, b.name); err != nil {
			a.stats.Changed--
			a.fail(b.file, err)
			return
		}
		fmt.Fprintf(a.out, "  %s: renamed %q\n", what, b.name)
	case !exists:
		a.stats.Changed++
		if a.dryRun {
			fmt.Fprintf(a.out, "  %s: would be created (%s)\n", what, describeEmbedding(b.embedding))
			break
		}
		if err := a.target.createKnowledgeBase(ctx, tenant, b); err != nil {
			a.stats.Changed--
			a.fail(b.file, err)
			return
		}
		fmt.Fprintf(a.out, "  %s: created (%s)\n", what, describeEmbedding(b.embedding))
	}
	var sources []liveSource
	if exists {
		var err error
		if sources, err = a.target.knowledgeSources(ctx, tenant, b.slug); err != nil {
			a.fail(b.file, err)
			return
		}
	}
	a.sources(ctx, tenant, b, sources)
}

func describeEmbedding(e *embeddingFile) string {
	if e == nil {
		return "keyword search only"
	}
	return "embedding " + e.Provider + "/" + e.Model
}

// sources makes a base's sources match its directory. A source of the
// directory is the live source with the same content (a base holds each
// content once), else the one with the same file name or URL. One whose
// content, title, tags or refresh differ is replaced: the new source is
// added (and indexed) before the old one is deleted, so searches find
// one of them meanwhile. With --prune, live sources the directory does
// not have are deleted, those added by hand included.
func (a *applier) sources(ctx context.Context, tenant string, b baseSpec, live []liveSource) {
	matched := make([]bool, len(live))
	unchanged := 0
	for _, s := range b.sources {
		i := matchSource(s, live, matched)
		if i < 0 {
			a.addSource(ctx, tenant, b, s)
			continue
		}
		matched[i] = true
		why := sourceDiff(s, live[i])
		if why == "" {
			unchanged++
			continue
		}
		a.replaceSource(ctx, tenant, b, s, live[i], why)
	}
	if unchanged > 0 {
		fmt.Fprintf(a.out, "  knowledge base %s: %d source(s) unchanged\n", b.slug, unchanged)
	}
	if !a.prune {
		return
	}
	for i, l := range live {
		if !matched[i] {
			a.remove(b.file, "knowledge base "+b.slug+": source "+sourceName(l), func() error {
				return a.target.deleteKnowledgeSource(ctx, tenant, b.slug, l.id)
			})
		}
	}
}

// matchSource is the index of the live source s stands for, -1 when
// none: first by content, then by file name or URL.
func matchSource(s sourceSpec, live []liveSource, taken []bool) int {
	if s.kind == kindFile {
		if i := slices.IndexFunc(live, func(l liveSource) bool { return l.hash == s.hash }); i >= 0 && !taken[i] {
			return i
		}
	}
	for i, l := range live {
		if taken[i] || l.kind != s.kind {
			continue
		}
		if (s.kind == kindFile && l.filename == s.filename) || (s.kind != kindFile && l.url == s.url) {
			return i
		}
	}
	return -1
}

// sourceDiff says what differs between s and the live source it stands
// for; "" when nothing does.
func sourceDiff(s sourceSpec, l liveSource) string {
	var what []string
	if s.kind == kindFile {
		title := s.title
		if title == "" {
			title = s.filename
		}
		switch {
		case l.hash != s.hash:
			what = append(what, "content")
		case l.kind != kindFile || l.filename != s.filename:
			what = append(what, "file name")
		}
		if l.title != title {
			what = append(what, "title")
		}
	} else if l.refresh != s.refresh {
		what = append(what, "refresh")
	}
	if !slices.Equal(nonNilSlice(l.tags), nonNilSlice(s.tags)) {
		what = append(what, "tags")
	}
	return strings.Join(what, ", ")
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// sourceName is how the output names a live source.
func sourceName(l liveSource) string {
	switch {
	case l.filename != "":
		return l.filename
	case l.url != "":
		return l.url
	case l.title != "":
		return fmt.Sprintf("%q (%s)", l.title, l.kind)
	}
	return l.id + " (" + l.kind + ")"
}

func (a *applier) addSource(ctx context.Context, tenant string, b baseSpec, s sourceSpec) {
	what := "knowledge base " + b.slug + ": source " + s.name
	a.stats.Sources++
	if a.dryRun {
		fmt.Fprintf(a.out, "  %s: would be added\n", what)
		return
	}
	if err := a.putSource(ctx, tenant, b.slug, s); err != nil {
		a.stats.Sources--
		a.fail(s.file, err)
		return
	}
	fmt.Fprintf(a.out, "  %s: added\n", what)
}

// replaceSource swaps the live source for s. A source with the same
// content or URL as the live one is deleted first: adding it first would
// only find the live one again.
func (a *applier) replaceSource(ctx context.Context, tenant string, b baseSpec, s sourceSpec, l liveSource, why string) {
	what := "knowledge base " + b.slug + ": source " + s.name
	a.stats.Sources++
	if a.dryRun {
		fmt.Fprintf(a.out, "  %s: changed (%s); would be replaced\n", what, why)
		return
	}
	del := func() error { return a.target.deleteKnowledgeSource(ctx, tenant, b.slug, l.id) }
	steps := []func() error{func() error { return a.putSource(ctx, tenant, b.slug, s) }, del}
	if l.hash == s.hash || s.kind != kindFile {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, step := range steps {
		if err := step(); err != nil {
			a.stats.Sources--
			a.fail(s.file, err)
			return
		}
	}
	fmt.Fprintf(a.out, "  %s: changed (%s); replaced\n", what, why)
}

// putSource adds s to the base, reading a document's content now.
func (a *applier) putSource(ctx context.Context, tenant, base string, s sourceSpec) error {
	var content []byte
	if s.kind == kindFile {
		var err error
		if content, err = os.ReadFile(s.file); err != nil {
			return err
		}
	}
	return a.target.addKnowledgeSource(ctx, tenant, base, s, content)
}
