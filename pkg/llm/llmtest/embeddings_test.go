package llmtest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestEmbedRanksAParaphraseAboveAnUnrelatedText(t *testing.T) {
	q := llmtest.Embed("How do I reset my password?")
	para := llmtest.Embed("To reset your password, open settings and choose reset password.")
	other := llmtest.Embed("Our office is closed on public holidays in Berlin.")
	if cosine(q, para) <= cosine(q, other) {
		t.Fatalf("paraphrase %.3f, unrelated %.3f", cosine(q, para), cosine(q, other))
	}
	if n := cosine(q, q); n < 0.999 || n > 1.001 {
		t.Fatalf("not normalised: |v|^2 = %f", n)
	}
}

func TestEmbeddingsEndpointIsStrict(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	tests := []struct {
		name, body string
		status     int
	}{
		{"a string input is one vector", `{"model":"m","input":"hi"}`, 200},
		{"an array of strings is a vector each", `{"model":"m","input":["a","b"]}`, 200},
		{"no model is refused", `{"input":"hi"}`, 400},
		{"an empty array is refused", `{"model":"m","input":[]}`, 400},
		{"an array of numbers is refused", `{"model":"m","input":[1,2]}`, 400},
		{"an unknown field is refused", `{"model":"m","input":"x","bogus":1}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(s.URL()+"/embeddings", "application/json", bytes.NewBufferString(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == 200 {
				var out struct {
					Data []struct{ Embedding []float32 }
				}
				json.NewDecoder(resp.Body).Decode(&out)
				if len(out.Data) == 0 || len(out.Data[0].Embedding) != llmtest.EmbeddingDims {
					t.Fatalf("data %+v", out.Data)
				}
			}
		})
	}
}
