package mcptool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// renderResult turns a tool result into the text the model reads: text
// blocks as they are, binary content as a short placeholder (the model cannot
// use base64 and it would flood the context), resources summarised, and
// structured content as compact JSON unless a text block already carries it.
func renderResult(res *mcp.CallToolResult) string {
	parts := make([]string, 0, len(res.Content)+1)
	for _, c := range res.Content {
		if s := renderContent(c); s != "" {
			parts = append(parts, s)
		}
	}
	if res.StructuredContent != nil {
		if js, err := json.Marshal(res.StructuredContent); err == nil && !containsJSON(parts, js) {
			parts = append(parts, string(js))
		}
	}
	return strings.Join(parts, "\n")
}

func renderContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		return renderLink(c)
	case *mcp.EmbeddedResource:
		return renderEmbedded(c.Resource)
	default:
		return fmt.Sprintf("[unsupported content: %T]", c)
	}
}

func renderLink(l *mcp.ResourceLink) string {
	label := l.Title
	if label == "" {
		label = l.Name
	}
	s := fmt.Sprintf("[resource link: %s <%s>", label, l.URI)
	if l.MIMEType != "" {
		s += ", " + l.MIMEType
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}

func renderEmbedded(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	if r.Text != "" || r.Blob == nil {
		return fmt.Sprintf("[resource <%s>, %s]\n%s", r.URI, orUnknown(r.MIMEType), r.Text)
	}
	return fmt.Sprintf("[resource <%s>: %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// containsJSON reports whether one of the text parts is the same JSON value
// as js. Servers are asked to mirror structured content in a text block, and
// the model should not read it twice.
func containsJSON(parts []string, js []byte) bool {
	for _, p := range parts {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(strings.TrimSpace(p))) != nil {
			continue
		}
		if jsonEqual(buf.Bytes(), js) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
