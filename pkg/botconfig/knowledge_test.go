package botconfig

import (
	"strings"
	"testing"
)

func TestKnowledgeSettings(t *testing.T) {
	t.Run("defaults to the tool mode and five passages", func(t *testing.T) {
		b := mustCompile(t, `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["help-center"]}}`)
		if k := b.Knowledge; k.Mode != KnowledgeModeTool || k.TopK != DefaultKnowledgeTopK || len(k.Bases) != 1 {
			t.Fatalf("knowledge %+v", k)
		}
		if !strings.Contains(b.SystemPrompt, KnowledgeSearchTool) || !strings.Contains(b.SystemPrompt, "[1]") ||
			strings.Contains(b.SystemPrompt, "You have no tools") {
			t.Fatalf("prompt does not tell the model to search and cite:\n%s", b.SystemPrompt)
		}
		if off := b.Offered(); len(off) != 1 || off[0].Name != KnowledgeSearchTool {
			t.Fatalf("offered %+v", off)
		}
	})
	t.Run("auto mode tells the model passages come with each answer", func(t *testing.T) {
		b := mustCompile(t, `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"], "mode": "auto", "top_k": 3, "min_score": 0.2, "tags_from": "plan"}}`)
		if k := b.Knowledge; k.Mode != KnowledgeModeAuto || k.TopK != 3 || k.MinScore != 0.2 || k.TagsFrom != "plan" {
			t.Fatalf("knowledge %+v", k)
		}
		if strings.Contains(b.SystemPrompt, KnowledgeSearchTool) || !strings.Contains(b.SystemPrompt, "are given to you") || len(b.Offered()) != 0 {
			t.Fatalf("prompt:\n%s", b.SystemPrompt)
		}
		if uses := b.KnowledgeUses(); len(uses) != 1 || uses[0].Pointer != "/knowledge/bases/0" {
			t.Fatalf("uses %+v", uses)
		}
	})
	tests := []struct {
		name, doc, pointer, message string
	}{
		{"no bases", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": []}}`, "/knowledge/bases", "at least 1"},
		{"a base that is no slug", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["Help Center"]}}`, "/knowledge/bases/0", "slug"},
		{"a base named twice", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb", "kb"]}}`, "/knowledge/bases/1", "twice"},
		{"a bad mode", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"], "mode": "always"}}`, "/knowledge/mode", "tool"},
		{"top_k out of range", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"], "top_k": 21}}`, "/knowledge/top_k", "20"},
		{"min_score out of range", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"], "min_score": 1.5}}`, "/knowledge/min_score", "1"},
		{"a claim name with spaces", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"], "tags_from": "my plan"}}`, "/knowledge/tags_from", "claim"},
		{"a config tool named search_knowledge", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"]},
  "tools": [{"name": "search_knowledge", "description": "x", "execution": "client"}]}`, "/tools/0/name", "/knowledge/mode"},
		{"an unknown field", `{"basic_settings": {"name": "B"}, "knowledge": {"bases": ["kb"], "rerank": true}}`, "/knowledge/rerank", "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is refused with its pointer", func(t *testing.T) {
			ps := loadProblems(t, tc.doc)
			if len(ps) == 0 || ps[0].Pointer != tc.pointer || !strings.Contains(ps[0].Message, tc.message) {
				t.Fatalf("problems %v, want one at %s mentioning %q", ps, tc.pointer, tc.message)
			}
		})
	}
}
