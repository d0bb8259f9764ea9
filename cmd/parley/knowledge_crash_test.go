package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/knowledge/chunk"
	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/longtest"
)

// embedGate stands between the server and the fake model and holds one
// embeddings request, the one numbered blockAt, until the server that sent
// it dies: the test kills the server knowing the source is half embedded.
// It passes every other request on whole: the model's answer is read to
// its end before the server gets it, with its length, so a client that
// closes once it has decoded the JSON cannot cut a stream still being
// copied (as a streaming proxy let it, now and then, failing the batch).
type embedGate struct {
	target *url.URL
	client http.Client
	mu     sync.Mutex
	seen   int
	at     int
	held   chan struct{}
	// done ends every held request when the test ends, so the server
	// closes.
	done chan struct{}
}

func newEmbedGate(t *testing.T, target string) (*embedGate, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &embedGate{target: u, done: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		close(g.done)
		srv.Close()
	})
	return g, srv.URL
}

// holdRequest makes the nth embeddings request from now wait; the
// returned channel closes when it arrives.
func (g *embedGate) holdRequest(n int) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.at, g.held = g.seen+n, make(chan struct{})
	return g.held
}

func (g *embedGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		g.mu.Lock()
		g.seen++
		hold := g.seen == g.at
		if hold {
			close(g.held)
		}
		g.mu.Unlock()
		if hold {
			select {
			case <-r.Context().Done(): // the server was killed
			case <-g.done:
			}
			return
		}
	}
	g.forward(w, r)
}

// forward sends r to the fake model and answers its response, read whole.
func (g *embedGate) forward(w http.ResponseWriter, r *http.Request) {
	u := *g.target
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := g.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

// bigManual is a Markdown manual of n sections, each its own chunk.
func bigManual(n int) string {
	var b strings.Builder
	b.WriteString("# Manual\n\n")
	for i := range n {
		fmt.Fprintf(&b, "## Part %d\n\nPart %d explains setting number %d: turn the dial to %d, wait for the light, and write %d in the log.\n\n", i, i, i, i*7, i*13)
	}
	return b.String()
}

// TestSIGKILLDuringIndexingLosesAndDuplicatesNothing kills the real
// program while it embeds a large source (an embeddings request in the
// middle is held until the kill), as many times as the run is long, and
// lets the server that takes over index it: the source ends ready with
// exactly the chunks a clean run makes, each once.
func TestSIGKILLDuringIndexingLosesAndDuplicatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills servers")
	}
	t.Parallel()
	sections, kills := longtest.Pick(200, 2000), longtest.Pick(1, 5)
	manual := bigManual(sections)
	doc, err := extract.Extract([]byte(manual), "manual.md", "", extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := len(chunk.Split(doc, chunk.Options{}))
	bin := parleyBinary(t)
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		t.Parallel()
		llm := chatServer(t, env, llmtest.Options{})
		gate, gateURL := newEmbedGate(t, llm.URL())
		env["PARLEY_LLM_BASE_URL"] = gateURL
		p := startProcess(t, bin, env)
		ctx := context.Background()
		created, err := apiclient.New(p.URL, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		key := created.APIKey.Key
		if _, err := apiclient.New(p.URL, key).CreateKnowledgeBase(ctx, "acme", apiclient.CreateKnowledgeBaseRequest{Name: "Help",
			Embedding: &apiclient.Embedding{Provider: "openai", Model: "text-embedding-3-small"}}); err != nil {
			t.Fatal(err)
		}
		held := gate.holdRequest(2) // the second batch of 64 chunks
		src, _, err := apiclient.New(p.URL, key).AddFileSource(ctx, "acme", "help", "manual.md", strings.NewReader(manual), nil, "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range kills {
			select {
			case <-held:
			case <-time.After(30 * time.Second):
				t.Fatalf("kill %d: the server never got to the held embeddings request", i+1)
			}
			// The server that takes over is held in turn, but one batch
			// later each time, until the last kill.
			p = killAndTakeOver(t, p, bin, env, func() {
				if i < kills-1 {
					held = gate.holdRequest(2 + i)
				}
			})
		}
		got := waitForSource(t, apiclient.New(p.URL, key), src.ID)
		if got.Status != "ready" || got.Chunks != want {
			t.Fatalf("after %d kills: status %s, %d chunks, error %q; a clean run makes %d", kills, got.Status, got.Chunks, got.Error, want)
		}
		chunks, err := apiclient.New(p.URL, key).SourceChunks(ctx, "acme", "help", src.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks.Chunks) != want {
			t.Fatalf("%d chunk rows, want %d", len(chunks.Chunks), want)
		}
		for i, c := range chunks.Chunks {
			if c.Chunk != i {
				t.Fatalf("chunk %d is numbered %d: a chunk is missing or twice", i, c.Chunk)
			}
		}
	})
}
