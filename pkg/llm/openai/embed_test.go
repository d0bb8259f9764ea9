package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

func TestEmbed(t *testing.T) {
	t.Run("each input gets its vector, in order", func(t *testing.T) {
		p, _ := newProvider(t, llmtest.Options{})
		vs, usage, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"hello world", "goodbye"})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || len(vs[0]) != llmtest.EmbeddingDims || vs[1][0] != llmtest.Embed("goodbye")[0] {
			t.Fatalf("vectors: %d of %d dims", len(vs), len(vs[0]))
		}
		if usage.InputTokens != 3 {
			t.Errorf("usage %+v", usage)
		}
	})
	t.Run("a 429 is retryable and carries Retry-After", func(t *testing.T) {
		p, s := newProvider(t, llmtest.Options{}, func(c *openai.Config) { c.MaxRetries = -1 })
		s.FailEmbeddings(*llmtest.RateLimited("30").Fault)
		_, _, err := p.Embed(context.Background(), "m", []string{"x"})
		var e *llm.Error
		retryable, after := llm.IsRetryable(err)
		if !errors.As(err, &e) || e.Kind != llm.ErrRateLimit || !retryable || after != 30*time.Second {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("no model is refused before sending", func(t *testing.T) {
		p, s := newProvider(t, llmtest.Options{})
		if _, _, err := p.Embed(context.Background(), "", []string{"x"}); err == nil || len(s.Requests()) != 0 {
			t.Fatalf("err = %v, %d requests", err, len(s.Requests()))
		}
	})
	t.Run("vectors of different lengths are an error", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0]},{"object":"embedding","index":1,"embedding":[1,0,0]}],"usage":{"prompt_tokens":2,"total_tokens":2}}`))
		}))
		defer srv.Close()
		p, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = p.Embed(context.Background(), "m", []string{"a", "b"})
		if err == nil || !strings.Contains(err.Error(), "input 1 has 3 dimensions, that of input 0 2") {
			t.Fatalf("err = %v", err)
		}
	})
}
