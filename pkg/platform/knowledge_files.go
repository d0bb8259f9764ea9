package platform

import (
	"context"
	"crypto/hmac"
	"errors"
	"mime"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// FileLinkLifetime is how long the link of a citation of an uploaded file
// opens the file (docs/knowledge.md).
const FileLinkLifetime = 24 * time.Hour

// FileLinkPath is where the links of uploaded files point; the token
// follows it.
const FileLinkPath = "/v1/knowledge/files/"

// fileLinkPurpose separates the links' signatures from every other
// digest of the secrets key.
const fileLinkPurpose = "knowledge file link"

// KnowledgeFile is an uploaded source as a signed link serves it.
type KnowledgeFile struct {
	Filename    string
	ContentType string
	Content     []byte
}

// FileLink returns a link that opens the uploaded file sourceID of base
// baseID for FileLinkLifetime, to anyone holding it. It is made only for
// a citation of a search the caller was allowed to make (tags_from kept
// the source), so the link carries that permission and no other: it
// names the tenant, base and source and its expiry, signed under a key
// derived from the server's secrets key.
func (k Knowledge) FileLink(tenantID, baseID, sourceID string) string {
	exp := strconv.FormatInt(k.svc.now().Add(FileLinkLifetime).Unix(), 10)
	sig := k.svc.opts.Sealer.Digest(fileLinkPurpose, tenantID, baseID, sourceID, exp)
	return FileLinkPath + strings.Join([]string{tenantID, baseID, sourceID, exp, sig}, ".")
}

var (
	errFileLink        = Errorf(CodeForbidden, "this link to a file is not valid: it was changed or cut short")
	errFileLinkExpired = Errorf(CodeLinkExpired, "this link to a file has expired; ask the bot again for a new one")
)

// OpenFile returns the uploaded file a token of FileLink names while its
// signature holds and it has not expired. A source deleted since is not
// found.
func (k Knowledge) OpenFile(ctx context.Context, token string) (*KnowledgeFile, error) {
	s := k.svc
	parts := strings.Split(token, ".")
	if len(parts) != 5 {
		return nil, errFileLink
	}
	tenantID, baseID, sourceID, exp, sig := parts[0], parts[1], parts[2], parts[3], parts[4]
	want := s.opts.Sealer.Digest(fileLinkPurpose, tenantID, baseID, sourceID, exp)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return nil, errFileLink
	}
	expires, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return nil, errFileLink
	}
	if !s.now().Before(time.Unix(expires, 0)) {
		return nil, errFileLinkExpired
	}
	kn := s.store.Tenant(tenantID).Knowledge()
	src, err := kn.Source(ctx, baseID, sourceID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, Errorf(CodeNotFound, "the file this link names was deleted")
	}
	if err != nil {
		return nil, s.internal(ctx, "open a linked knowledge file", err)
	}
	if src.Kind != store.SourceFile {
		return nil, errFileLink
	}
	content, err := kn.Content(ctx, sourceID)
	if err != nil {
		return nil, s.internal(ctx, "open a linked knowledge file", err)
	}
	return &KnowledgeFile{Filename: src.Filename, ContentType: fileType(src), Content: content}, nil
}

// fileType is the type an uploaded file is served as: the one its upload
// declared, else its extension's, else bytes.
func fileType(src *store.KnowledgeSource) string {
	if t, _, err := mime.ParseMediaType(src.ContentType); err == nil && t != "application/octet-stream" {
		return src.ContentType
	}
	if t := mime.TypeByExtension(path.Ext(src.Filename)); t != "" {
		return t
	}
	return "application/octet-stream"
}
