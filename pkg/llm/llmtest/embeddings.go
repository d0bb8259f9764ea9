package llmtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"

	"github.com/parleyhq/parley/pkg/llm/openai/wire"
)

// EmbeddingDims is the length of the fake's embedding vectors.
const EmbeddingDims = 256

// FailEmbeddings makes the next embeddings requests, one each, fail
// with faults (their Status, RetryAfter, Type, Code and Message).
func (s *Server) FailEmbeddings(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFaults = append(s.embedFaults, faults...)
}

// embeddings answers /v1/embeddings as strictly as the real API about
// its body: a model, and an input that is a non-empty string or array
// of non-empty strings. Each vector is Embed of its input.
func (s *Server) embeddings(w http.ResponseWriter, rec *Record) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
		User           string          `json:"user"`
	}
	dec := json.NewDecoder(strings.NewReader(string(rec.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.fail(w, rec, invalidRequest("", "We could not parse the JSON body of your request: %v", err), "")
		return
	}
	if req.Model == "" {
		s.fail(w, rec, invalidRequest("model", "you must provide a model parameter"), "")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		s.fail(w, rec, invalidRequest("encoding_format", "llmtest: only the float encoding is served, not %q", req.EncodingFormat), "")
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil || len(inputs) == 0 {
		s.fail(w, rec, invalidRequest("input", "'input' must be a string or a non-empty array of strings"), "")
		return
	}
	for i, in := range inputs {
		if in == "" {
			s.fail(w, rec, invalidRequest("input", "'input[%d]' must not be an empty string", i), "")
			return
		}
	}
	s.mu.Lock()
	var f *Fault
	if len(s.embedFaults) > 0 {
		f, s.embedFaults = &s.embedFaults[0], s.embedFaults[1:]
	}
	s.mu.Unlock()
	if f != nil {
		e := &apiError{status: f.Status, body: wire.Error{Type: f.Type, Message: f.Message}}
		if f.Code != "" {
			e.body.Code = &f.Code
		}
		s.fail(w, rec, e, f.RetryAfter)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(inputs))
	tokens := 0
	for i, in := range inputs {
		data[i] = item{Object: "embedding", Index: i, Embedding: Embed(in)}
		tokens += len(strings.Fields(in))
	}
	s.setStatus(rec, http.StatusOK)
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "model": req.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// Embed is the fake's vector of text: its lower-cased word unigrams and
// bigrams and its character trigrams, hashed into EmbeddingDims
// buckets, L2-normalised. Texts sharing words and word stems lie close,
// so a paraphrase ranks above an unrelated text, as with a real model.
func Embed(text string) []float32 {
	v := make([]float64, EmbeddingDims)
	add := func(feature string, weight float64) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%EmbeddingDims] += sign * weight
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		add("w:"+w, 1)
		if i > 0 {
			add("b:"+words[i-1]+" "+w, 1)
		}
		r := []rune(" " + w + " ")
		for j := 0; j+3 <= len(r); j++ {
			add("c:"+string(r[j:j+3]), 0.5)
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, EmbeddingDims)
	if norm == 0 {
		out[0] = 1 // an input with no words still has a unit vector
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
