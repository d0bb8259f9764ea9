package apply

import (
	"bytes"
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// uploadType is the content type of a document apply uploads: what the
// API client's multipart part says, so both targets store the same and
// the extractors go by the file's name.
const uploadType = "application/octet-stream"

func embeddingOf(provider, model string) *embeddingFile {
	if provider == "" && model == "" {
		return nil
	}
	return &embeddingFile{Provider: provider, Model: model}
}

func (d dbTarget) knowledgeBases(ctx context.Context, tenant string) ([]liveBase, error) {
	list, err := d.svc.Knowledge().ListBases(ctx, d.op, tenant)
	out := make([]liveBase, len(list))
	for i, b := range list {
		out[i] = liveBase{slug: b.Slug, name: b.Name, embedding: embeddingOf(b.EmbeddingProvider, b.EmbeddingModel)}
	}
	return out, err
}

func (d dbTarget) createKnowledgeBase(ctx context.Context, tenant string, b baseSpec) error {
	in := platform.KnowledgeBaseInput{Name: b.name, Slug: b.slug}
	if b.embedding != nil {
		in.EmbeddingProvider, in.EmbeddingModel = b.embedding.Provider, b.embedding.Model
	}
	_, err := d.svc.Knowledge().CreateBase(ctx, d.op, tenant, in)
	return err
}

func (d dbTarget) renameKnowledgeBase(ctx context.Context, tenant, slug, name string) error {
	_, err := d.svc.Knowledge().RenameBase(ctx, d.op, tenant, slug, name)
	return err
}

func (d dbTarget) deleteKnowledgeBase(ctx context.Context, tenant, slug string) error {
	return d.svc.Knowledge().DeleteBase(ctx, d.op, tenant, slug)
}

func (d dbTarget) knowledgeSources(ctx context.Context, tenant, base string) ([]liveSource, error) {
	list, err := d.svc.Knowledge().ListSources(ctx, d.op, tenant, base)
	out := make([]liveSource, len(list))
	for i, s := range list {
		out[i] = liveSource{id: s.ID, kind: s.Kind, title: s.Title, filename: s.Filename, url: s.URL, hash: s.ContentHash,
			tags: s.Tags, refresh: time.Duration(s.RefreshSeconds) * time.Second}
	}
	return out, err
}

func (d dbTarget) addKnowledgeSource(ctx context.Context, tenant, base string, s sourceSpec, content []byte) error {
	in := platform.SourceInput{Kind: s.kind, Title: s.title, URL: s.url, Tags: s.tags}
	if s.kind == kindFile {
		in.Filename, in.ContentType, in.Content = s.filename, uploadType, content
	}
	if s.refresh > 0 {
		in.Refresh = s.refresh.String()
	}
	_, _, err := d.svc.Knowledge().AddSource(ctx, d.op, tenant, base, in)
	return err
}

func (d dbTarget) deleteKnowledgeSource(ctx context.Context, tenant, base, id string) error {
	return d.svc.Knowledge().DeleteSource(ctx, d.op, tenant, base, id)
}

func (a apiTarget) knowledgeBases(ctx context.Context, tenant string) ([]liveBase, error) {
	list, err := a.c.ListKnowledgeBases(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]liveBase, len(list.KnowledgeBases))
	for i, b := range list.KnowledgeBases {
		out[i] = liveBase{slug: b.Slug, name: b.Name}
		if b.Embedding != nil {
			out[i].embedding = embeddingOf(b.Embedding.Provider, b.Embedding.Model)
		}
	}
	return out, nil
}

func (a apiTarget) createKnowledgeBase(ctx context.Context, tenant string, b baseSpec) error {
	req := apiclient.CreateKnowledgeBaseRequest{Name: b.name, Slug: b.slug}
	if b.embedding != nil {
		req.Embedding = &apiclient.Embedding{Provider: b.embedding.Provider, Model: b.embedding.Model}
	}
	_, err := a.c.CreateKnowledgeBase(ctx, tenant, req)
	return err
}

func (a apiTarget) renameKnowledgeBase(ctx context.Context, tenant, slug, name string) error {
	_, err := a.c.UpdateKnowledgeBase(ctx, tenant, slug, apiclient.UpdateKnowledgeBaseRequest{Name: &name})
	return err
}

func (a apiTarget) deleteKnowledgeBase(ctx context.Context, tenant, slug string) error {
	return a.c.DeleteKnowledgeBase(ctx, tenant, slug)
}

func (a apiTarget) knowledgeSources(ctx context.Context, tenant, base string) ([]liveSource, error) {
	list, err := a.c.ListSources(ctx, tenant, base)
	if err != nil {
		return nil, err
	}
	out := make([]liveSource, len(list.Sources))
	for i, s := range list.Sources {
		out[i] = liveSource{id: s.ID, kind: s.Kind, title: s.Title, filename: s.Filename, url: s.URL, hash: s.ContentHash, tags: s.Tags}
		if s.Refresh != "" {
			if out[i].refresh, err = time.ParseDuration(s.Refresh); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (a apiTarget) addKnowledgeSource(ctx context.Context, tenant, base string, s sourceSpec, content []byte) error {
	var err error
	if s.kind == kindFile {
		_, _, err = a.c.AddFileSource(ctx, tenant, base, s.filename, bytes.NewReader(content), s.tags, s.title)
		return err
	}
	req := apiclient.AddSourceRequest{Tags: s.tags}
	if s.kind == kindSitemap {
		req.Sitemap = s.url
	} else {
		req.URL = s.url
	}
	if s.refresh > 0 {
		req.Refresh = s.refresh.String()
	}
	_, _, err = a.c.AddSource(ctx, tenant, base, req)
	return err
}

func (a apiTarget) deleteKnowledgeSource(ctx context.Context, tenant, base, id string) error {
	return a.c.DeleteSource(ctx, tenant, base, id)
}
