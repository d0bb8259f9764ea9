package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// wantsSSE reports whether the client asked for an event stream.
func wantsSSE(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// maxRecorded caps how much of a stream is kept for Idempotency-Key
// replays; a longer reply is replayed cut, with a final error event.
const maxRecorded = 1 << 20

// sseStream writes a run's events as server-sent events: "event: <type>"
// and "data: <json>" per event, flushed at once, and a ": ping" comment
// while nothing else is sent. It answers 200 with its first event, so
// errors found before the run starts still get a proper status. It is the
// run's agent.Sink and safe to call from the loop's goroutine while the
// ping timer fires.
type sseStream struct {
	c    *gin.Context
	ping time.Duration
	open prometheus.Gauge // open streams; nil counts nothing

	mu       sync.Mutex
	started  bool
	closed   bool
	broken   bool // the client went away; the run goes on and is stored
	noRecord bool // nobody will replay this stream
	rec      bytes.Buffer
	cut      bool // rec reached maxRecorded
	ticker   *time.Timer
}

func newSSE(c *gin.Context, ping time.Duration, open prometheus.Gauge) *sseStream {
	return &sseStream{c: c, ping: ping, open: open}
}

// withoutRecording stops keeping the stream for replays: without an
// Idempotency-Key nothing replays it, and the copy is memory held for as
// long as the stream is open.
func (s *sseStream) withoutRecording() *sseStream {
	s.noRecord = true
	return s
}

// Send writes one event.
func (s *sseStream) Send(e agent.Event) {
	s.write(encode(nil, e))
}

// SendID writes one event with an id line (a message's seq on a dialog's
// live stream), which the client sends back as Last-Event-ID to resume;
// id 0 writes none.
func (s *sseStream) SendID(id int64, e agent.Event) {
	if id == 0 {
		s.Send(e)
		return
	}
	s.write(encode([]byte("id: "+strconv.FormatInt(id, 10)+"\n"), e))
}

// SendAll writes events that are due together in one write and one
// flush (dialog.BatchSink): a stored reply releases its message,
// turn_end and done at once, and none waits for the others.
func (s *sseStream) SendAll(events []agent.Event) {
	if len(events) == 0 {
		return
	}
	var b []byte
	for _, e := range events {
		b = encode(b, e)
	}
	s.write(b)
}

var _ dialog.BatchSink = (*sseStream)(nil)

// encode appends e's frame to b. The platform's own events become their
// apiclient wire types, so a message reads the same in a stream as in the
// dialog's history; the loop's events already marshal as docs/events.md
// says.
func encode(b []byte, e agent.Event) []byte {
	var v any = e
	switch e := e.(type) {
	case dialog.MessageEvent:
		v = apiclient.MessageEvent{Type: e.Type(), Message: dialog.WireMessage(e.Message)}
	case dialog.DialogEvent:
		v = apiclient.DialogEvent{Type: e.Type(), DialogID: e.DialogID}
	case dialog.AgentStart:
		v = apiclient.AgentStartEvent{Type: e.Type(), Agent: e.Agent, Bot: e.Bot, CallID: e.CallID, DialogID: e.DialogID}
	case dialog.AgentEnd:
		v = apiclient.AgentEndEvent{Type: e.Type(), Agent: e.Agent, CallID: e.CallID, DialogID: e.DialogID,
			StopReason: string(e.StopReason), Text: e.Text, Turns: e.Turns,
			Usage: apiclient.Usage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens}}
	case dialog.NestedEvent:
		v = nestedEvent(e)
	case dialog.OperatorMessageEvent:
		v = apiclient.OperatorMessageEvent{Type: e.Type(), Message: dialog.WireMessage(e.Message)}
	case dialog.HandoffEvent:
		v = apiclient.HandoffEvent{Type: e.Type(), Status: e.Status, Operator: e.Operator}
	case dialog.TypingEvent:
		v = apiclient.TypingEvent{Type: e.Type(), Who: e.Who, Name: e.Name}
	case dialog.ReadEvent:
		v = apiclient.ReadMark{Type: e.Type(), Who: e.Who, Seq: e.Seq, ReadAt: e.ReadAt}
	case dialog.CitationEvent:
		v = apiclient.CitationEvent{Type: e.Type(), Citation: dialog.WireCitation(e.Citation)}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return append(b, frame("error", []byte(unencodableEvent))...)
	}
	return append(b, frame(e.Type(), data)...)
}

// The error events the stream writes itself, as agent.Error encodes them.
const (
	unencodableEvent = `{"type":"error","code":"internal","message":"an event could not be encoded","retryable":false}`
	replayTruncated  = `{"type":"error","code":"replay_truncated","message":"this replay is cut short; read the dialog for the whole reply","retryable":false}`
)

// frame is one SSE event. encoding/json never writes a raw newline, so the
// data fits the one data line the format allows per field.
func frame(typ string, data []byte) []byte {
	b := make([]byte, 0, len(typ)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

func (s *sseStream) write(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if !s.started {
		s.begin()
	}
	switch {
	case s.noRecord:
	case !s.cut && s.rec.Len()+len(b) <= maxRecorded:
		s.rec.Write(b)
	default:
		s.cut = true
	}
	s.send(b)
}

// begin writes the headers and starts the pings. Call with mu held, just
// before the first event: the headers go out with its flush, in one write
// rather than two.
func (s *sseStream) begin() {
	s.started = true
	h := s.c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would otherwise hold the events back
	s.c.Writer.WriteHeader(http.StatusOK)
	if s.open != nil {
		s.open.Inc()
	}
	s.ticker = time.AfterFunc(s.ping, s.pingOnce)
}

// send writes to the client unless it went away. Call with mu held.
func (s *sseStream) send(b []byte) {
	if s.broken {
		return
	}
	if _, err := s.c.Writer.Write(b); err != nil {
		s.broken = true
		return
	}
	s.c.Writer.Flush()
}

// pingOnce writes a ping and arms the next; a ping that fires as the
// stream closes finds it closed under mu and writes nothing.
func (s *sseStream) pingOnce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.send([]byte(": ping\n\n"))
	s.ticker.Reset(s.ping)
}

// close stops the pings; nothing is written after it, so the handler may
// return.
func (s *sseStream) close() {
	s.mu.Lock()
	started := s.started && !s.closed
	s.closed = true
	if started {
		s.ticker.Stop()
	}
	s.mu.Unlock()
	if started && s.open != nil {
		s.open.Dec()
	}
}

// recorded is what was streamed, for Idempotency-Key replays. A recording
// cut at maxRecorded ends with an error event, so a replay never looks
// like a whole reply that just stopped.
func (s *sseStream) recorded() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cut {
		return s.started, s.rec.String()
	}
	return s.started, s.rec.String() + string(frame("error", []byte(replayTruncated)))
}

// nestedEvent is a sub-run's event as the loop encodes it (its "type"
// first), with the "agent" path added right after "type".
func nestedEvent(e dialog.NestedEvent) json.RawMessage {
	inner, err := json.Marshal(e.Event)
	if err != nil || !bytes.HasPrefix(inner, []byte(`{"type":"`)) {
		return json.RawMessage(unencodableEvent)
	}
	// Event types are plain words: the type's value ends at the next quote.
	end := len(`{"type":"`) + bytes.IndexByte(inner[len(`{"type":"`):], '"') + 1
	agent, _ := json.Marshal(e.Agent)
	out := make([]byte, 0, len(inner)+len(agent)+10)
	out = append(out, inner[:end]...)
	out = append(out, `,"agent":`...)
	out = append(out, agent...)
	return append(out, inner[end:]...)
}
