package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// DefaultModerationWords are the words the fake's moderation endpoint
// flags when Options.ModerationWords is nil, with the category each
// flags: deterministic, so a test says exactly what is flagged.
var DefaultModerationWords = map[string]string{
	"kill":     "violence",
	"bomb":     "violence",
	"hateful":  "hate",
	"selfharm": "self-harm",
}

// moderationCategories are the categories OpenAI's endpoint answers with.
var moderationCategories = []string{"hate", "hate/threatening", "harassment", "harassment/threatening", "self-harm",
	"self-harm/intent", "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic"}

// moderations answers POST /v1/moderations as OpenAI does, strict about
// the body (input: a non-empty string or array of strings; model
// optional), flagging an input that has one of the moderation words as a
// whole word, in any case.
func (s *Server) moderations(w http.ResponseWriter, rec *Record) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	dec := json.NewDecoder(strings.NewReader(string(rec.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.fail(w, rec, invalidRequest("", "We could not parse the JSON body of your request: %v", err), "")
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil && one != "" {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil || len(inputs) == 0 {
		s.fail(w, rec, invalidRequest("input", "'input' must be a non-empty string or array of strings"), "")
		return
	}
	words := s.opts.ModerationWords
	if words == nil {
		words = DefaultModerationWords
	}
	type result struct {
		Flagged        bool               `json:"flagged"`
		Categories     map[string]bool    `json:"categories"`
		CategoryScores map[string]float64 `json:"category_scores"`
	}
	results := make([]result, len(inputs))
	for i, in := range inputs {
		r := result{Categories: map[string]bool{}, CategoryScores: map[string]float64{}}
		for _, c := range moderationCategories {
			r.Categories[c], r.CategoryScores[c] = false, 0.001
		}
		for _, word := range strings.FieldsFunc(strings.ToLower(in), func(c rune) bool {
			return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9')
		}) {
			if c, ok := words[word]; ok {
				r.Flagged, r.Categories[c], r.CategoryScores[c] = true, true, 0.99
			}
		}
		results[i] = r
	}
	model := req.Model
	if model == "" {
		model = "omni-moderation-latest"
	}
	s.setStatus(rec, http.StatusOK)
	writeJSON(w, http.StatusOK, map[string]any{"id": "modr-llmtest", "model": model, "results": results})
}
