package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm/openai/wire"
)

// Options configures a fake server.
type Options struct {
	// APIKey, when set, must arrive as "Authorization: Bearer <APIKey>".
	APIKey string
	// FragmentSize is how many characters of text or tool arguments go in
	// one streamed chunk; 0 means 8.
	FragmentSize int
	// Latency delays every reply, before its first byte.
	Latency time.Duration
	// ChunkDelay pauses between streamed chunks, for demos.
	ChunkDelay time.Duration
	// Handler answers requests once the queue of scripted replies is empty;
	// it receives the parsed request so tests can inspect what was sent. It
	// is called concurrently when requests are.
	Handler func(*ChatRequest) ServerReply
	// MessagesHandler is Handler for Anthropic Messages requests.
	MessagesHandler func(*MessagesRequest) ServerReply
	// Unrecorded keeps no Record of the requests served (Requests and
	// LastRequest see none): a fake serving a load generator would
	// otherwise hold every request of the run, and its growing heap would
	// slow the calls the load measures.
	Unrecorded bool
	// ModerationWords are the words POST /v1/moderations flags, each with
	// its category; nil means DefaultModerationWords.
	ModerationWords map[string]string
}

// Record is one request the server received, kept for assertions.
type Record struct {
	// At is when the request arrived, as the server saw it.
	At     time.Time
	Method string
	Path   string
	Query  string // the raw query, as Azure's api-version travels there
	Header http.Header
	Body   []byte
	// Request is the parsed chat-completions body, nil when it did not
	// parse or the request was for another route.
	Request *ChatRequest
	// Messages is the parsed Anthropic Messages body, likewise.
	Messages *MessagesRequest
	// Status is the HTTP status the server answered with; 0 while the
	// request is in progress or when the connection was dropped on purpose.
	Status int
}

// Server is a fake OpenAI-compatible chat-completions API, as strict as the
// real one about the conversation it is sent. It is an http.Handler; use
// NewServer in tests, NewHandler to serve it yourself.
type Server struct {
	opts Options
	ts   *httptest.Server

	mu      sync.Mutex
	queue   []ServerReply
	records []*Record
	seq     int
	// cached holds the prompt prefixes Anthropic requests marked for
	// caching, so a later request starting the same way reads them.
	cached map[string]bool
	// embedFaults fail the next embeddings requests, one each.
	embedFaults []Fault
}

// NewHandler returns an unstarted fake, to mount on a server of your own.
func NewHandler(opts Options) *Server {
	if opts.FragmentSize <= 0 {
		opts.FragmentSize = 8
	}
	return &Server{opts: opts}
}

// NewServer starts a fake on a loopback port and closes it when tb ends.
func NewServer(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := NewHandler(opts)
	s.ts = httptest.NewServer(s)
	tb.Cleanup(s.Close)
	return s
}

// BaseURL returns the server's root URL, the base URL of an Anthropic
// client (which adds /v1/messages); "" for a server made by NewHandler.
func (s *Server) BaseURL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// URL returns the base URL OpenAI clients are configured with, ending in
// /v1; "" for a server made by NewHandler.
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL + "/v1"
}

// Close stops a server started by NewServer; tests need not call it. Open
// connections are cut first, so a reply scripted to wait a minute does not
// hold the test up.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.CloseClientConnections()
		s.ts.Close()
	}
}

// Enqueue appends scripted replies; each request that passes validation
// takes the next one.
func (s *Server) Enqueue(replies ...ServerReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending returns how many scripted replies are left.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, len(s.records))
	for i, r := range s.records {
		out[i] = *r
	}
	return out
}

// LastMessages returns the last parsed Anthropic Messages request, or nil.
func (s *Server) LastMessages() *MessagesRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.records) - 1; i >= 0; i-- {
		if s.records[i].Messages != nil {
			return s.records[i].Messages
		}
	}
	return nil
}

// LastRequest returns the last parsed chat request, or nil.
func (s *Server) LastRequest() *ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.records) - 1; i >= 0; i-- {
		if s.records[i].Request != nil {
			return s.records[i].Request
		}
	}
	return nil
}

const maxBody = 32 << 20

// ServeHTTP implements the chat-completions, embeddings and models routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := s.add(&Record{At: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})

	if r.URL.Path == "/v1/messages" {
		s.messages(w, r, rec)
		return
	}
	if e := s.authorize(r); e != nil {
		s.fail(w, rec, e, "")
		return
	}
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.setStatus(rec, http.StatusOK)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]string{{"id": "fake-model", "object": "model", "owned_by": "llmtest"}}})
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.chat(w, r, rec)
	case r.URL.Path == "/v1/embeddings" && r.Method == http.MethodPost:
		s.embeddings(w, rec)
	case r.URL.Path == "/v1/moderations" && r.Method == http.MethodPost:
		s.moderations(w, rec)
	case r.URL.Path == "/v1/chat/completions":
		s.fail(w, rec, &apiError{status: http.StatusMethodNotAllowed, body: wire.Error{Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path)}}, "")
	default:
		s.fail(w, rec, &apiError{status: http.StatusNotFound, body: wire.Error{Type: "invalid_request_error",
			Message: fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path)}}, "")
	}
}

// authorize echoes a wrong key back in full. The real API masks most of it;
// being harsher here proves that clients keep error text free of keys.
func (s *Server) authorize(r *http.Request) *apiError {
	if s.opts.APIKey == "" {
		return nil
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok && got == s.opts.APIKey {
		return nil
	}
	code := "invalid_api_key"
	msg := fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", got)
	if got == "" {
		msg = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth."
	}
	return &apiError{status: http.StatusUnauthorized, body: wire.Error{Type: "invalid_request_error", Code: &code, Message: msg}}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, rec *Record) {
	var req ChatRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.fail(w, rec, invalidRequest("", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.) %v", err), "")
		return
	}
	s.mu.Lock()
	rec.Request = &req
	s.mu.Unlock()
	if e := validate(&req); e != nil {
		s.fail(w, rec, e, "")
		return
	}
	reply, ok := s.next(&req)
	if !ok {
		s.fail(w, rec, invalidRequest("", "llmtest: no scripted reply left and no Handler set (%d requests so far)", len(s.Requests())), "")
		return
	}
	f := reply.Fault
	if f == nil {
		f = &Fault{}
	}
	if !waitOrDone(r, s.opts.Latency+f.Latency) {
		s.setStatus(rec, 499) // the client went away while we waited
		return
	}
	if f.Disconnect {
		panic(http.ErrAbortHandler) // closes the connection with nothing sent
	}
	if f.Status != 0 {
		e := &apiError{status: f.Status, body: wire.Error{Type: f.Type, Message: f.Message}}
		if f.Code != "" {
			e.body.Code = &f.Code
		}
		s.fail(w, rec, e, f.RetryAfter)
		return
	}
	s.setStatus(rec, http.StatusOK)
	id := s.nextID()
	if req.Stream {
		s.stream(w, r, &req, reply, id)
		return
	}
	writeJSON(w, http.StatusOK, completion(&req, reply, id))
}

// next pops the next scripted reply, or asks the Handler.
func (s *Server) next(req *ChatRequest) (ServerReply, bool) {
	if s.opts.Handler == nil {
		return s.nextFor(nil)
	}
	return s.nextFor(func() ServerReply { return s.opts.Handler(req) })
}

// nextFor pops the next scripted reply, or asks handle, when there is one.
func (s *Server) nextFor(handle func() ServerReply) (ServerReply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	s.mu.Unlock()
	if handle != nil {
		return handle(), true
	}
	return ServerReply{}, false
}

func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// add records a request on arrival, so its time is when it came in and
// tests can see a request the server is still working on. The record's
// Request and Status change under s.mu; its Body never does.
func (s *Server) add(rec *Record) *Record {
	if s.opts.Unrecorded {
		return rec
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, rec)
	return rec
}

func (s *Server) setStatus(rec *Record, status int) {
	s.mu.Lock()
	rec.Status = status
	s.mu.Unlock()
}

func (s *Server) fail(w http.ResponseWriter, rec *Record, e *apiError, retryAfter string) {
	s.setStatus(rec, e.status)
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(errorBody(e))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// sleep waits d unless the request is cancelled first; it reports whether
// the wait completed.
func waitOrDone(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
