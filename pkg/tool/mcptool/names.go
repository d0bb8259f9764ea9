package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
)

// exposedName returns the name the model sees for a server's tool:
// <server>__<tool>, with every character outside [a-zA-Z0-9_-] replaced by
// "_". A name longer than 64 characters is cut and given a short hash of the
// full original name, so two long names that share a prefix stay distinct.
func exposedName(server, remote string) string {
	name := sanitize(server) + botconfig.MCPToolSeparator + sanitize(remote)
	if len(name) <= llm.MaxToolNameLen {
		return name
	}
	return name[:llm.MaxToolNameLen-9] + "_" + shortHash(server+botconfig.MCPToolSeparator+remote)
}

// uniqueName returns name, or, when taken is true for it (two remote names
// that sanitize to the same text, like "a.b" and "a_b"), a variant with a hash
// of the remote name that is not taken.
func uniqueName(name, server, remote string, taken func(string) bool) string {
	if !taken(name) {
		return name
	}
	suffix := "_" + shortHash(server+botconfig.MCPToolSeparator+remote)
	base := name
	if len(base)+len(suffix) > llm.MaxToolNameLen {
		base = base[:llm.MaxToolNameLen-len(suffix)]
	}
	return base + suffix
}

func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
