package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/agent"
)

// parseSSE splits a stream into (event, data) pairs and comments, the way
// a browser's EventSource reads it.
func parseSSE(t testing.TB, stream string) (events [][2]string, comments int) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var typ, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if typ != "" || data != "" {
				events = append(events, [2]string{typ, data})
			}
			typ, data = "", ""
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if data != "" {
				t.Fatalf("an event has two data lines: %q", stream)
			}
			data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return events, comments
}

func newTestStream(ping time.Duration) (*sseStream, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	return newSSE(c, ping, nil), rec
}

func TestSSEFramesEachEventWithItsType(t *testing.T) {
	t.Parallel()
	s, rec := newTestStream(time.Hour)
	s.Send(agent.TurnStart{Turn: 1, Model: "m", Provider: "p"})
	s.Send(agent.TextDelta{Text: "line one\nline two"})
	s.Send(agent.Done{Text: "ok", StopReason: agent.StopCompleted})
	s.close()
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events, _ := parseSSE(t, rec.Body.String())
	if len(events) != 3 || events[0][0] != "turn_start" || events[1][0] != "text_delta" || events[2][0] != "done" {
		t.Fatalf("events %q", events)
	}
	var delta agent.TextDelta
	if err := json.Unmarshal([]byte(events[1][1]), &delta); err != nil || delta.Text != "line one\nline two" {
		t.Fatalf("delta %+v, %v", delta, err)
	}
	if _, rec2 := s.recorded(); rec2 != rec.Body.String() {
		t.Fatal("the recording differs from what was sent")
	}
}

func TestSSEPingsAnIdleStreamUntilClosed(t *testing.T) {
	t.Parallel()
	s, rec := newTestStream(time.Millisecond)
	s.Send(agent.TurnStart{Turn: 1})
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		body := rec.Body.String()
		s.mu.Unlock()
		if strings.Contains(body, ": ping\n\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no ping arrived")
		}
		time.Sleep(time.Millisecond)
	}
	s.close()
	after := rec.Body.Len()
	time.Sleep(5 * time.Millisecond)
	s.Send(agent.TextDelta{Text: "late"})
	if rec.Body.Len() != after {
		t.Fatal("the stream was written after close")
	}
	if _, recorded := s.recorded(); strings.Contains(recorded, "ping") {
		t.Fatal("pings were recorded for replay")
	}
}

func TestSSEStartsNothingWithoutAnEvent(t *testing.T) {
	t.Parallel()
	s, rec := newTestStream(time.Millisecond)
	s.close()
	if started, _ := s.recorded(); started || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Fatalf("a stream with no event wrote %q", rec.Body.String())
	}
}

func FuzzSSEFrameRoundTrips(f *testing.F) {
	for _, seed := range []string{"", "hello", "a\nb", "\r\n\r\n", "event: x\ndata: y\n\n", ": ping", "\u2028\u2029", "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		data, err := json.Marshal(agent.TextDelta{Text: text})
		if err != nil {
			t.Skip()
		}
		b := frame("text_delta", data)
		if bytes.Count(b, []byte("\n\n")) != 1 || !bytes.HasSuffix(b, []byte("\n\n")) {
			t.Fatalf("frame %q does not end exactly once", b)
		}
		events, comments := parseSSE(t, string(b))
		if len(events) != 1 || comments != 0 || events[0][0] != "text_delta" {
			t.Fatalf("frame %q parsed as %q", b, events)
		}
		var got agent.TextDelta
		if err := json.Unmarshal([]byte(events[0][1]), &got); err != nil {
			t.Fatal(err)
		}
		// Invalid UTF-8 comes back with replacement characters, by design.
		if utf8.ValidString(text) && got.Text != text {
			t.Fatalf("text %q came back as %q", text, got.Text)
		}
	})
}

func TestSSEARecordingOverTheCapEndsWithAnErrorEvent(t *testing.T) {
	t.Parallel()
	s, rec := newTestStream(time.Hour)
	big := strings.Repeat("x", 64<<10)
	for rec.Body.Len() <= maxRecorded {
		s.Send(agent.TextDelta{Text: big})
	}
	s.Send(agent.Done{StopReason: agent.StopCompleted})
	s.close()
	_, recorded := s.recorded()
	events, _ := parseSSE(t, recorded)
	if len(recorded) > maxRecorded+1024 || events[len(events)-1][0] != "error" || !strings.Contains(events[len(events)-1][1], "replay_truncated") {
		t.Fatalf("%d bytes recorded, last event %q", len(recorded), events[len(events)-1][0])
	}
	if !strings.HasSuffix(rec.Body.String(), "event: done\ndata: "+`{"type":"done","text":"","turns":0,"usage":{"input_tokens":0,"output_tokens":0},"stop_reason":"completed"}`+"\n\n") {
		t.Fatal("the live stream was cut too")
	}
}

// flushCounter counts the flushes a stream makes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// TestSSEWritesEventsDueTogetherInOneFlush: the events a stored reply
// lets go (its message, turn_end and done) leave in one write, in order,
// each framed on its own.
func TestSSEWritesEventsDueTogetherInOneFlush(t *testing.T) {
	t.Parallel()
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	c, _ := gin.CreateTestContext(w)
	s := newSSE(c, time.Hour, nil)
	s.Send(agent.TurnStart{Turn: 1, Model: "m", Provider: "p"})
	s.SendAll([]agent.Event{agent.TurnEnd{Turn: 1, StopReason: agent.StopCompleted}, agent.Done{Text: "ok", StopReason: agent.StopCompleted}})
	s.SendAll(nil)
	s.close()
	if w.flushes != 2 {
		t.Fatalf("%d flushes, want one per Send and one per SendAll", w.flushes)
	}
	events, _ := parseSSE(t, w.Body.String())
	var types []string
	for _, e := range events {
		types = append(types, e[0])
	}
	if got := strings.Join(types, " "); got != "turn_start turn_end done" {
		t.Fatalf("events %s", got)
	}
}

// The stream's own error events read exactly as the loop's error events.
func TestTheStreamsOwnErrorEventsAreAgentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fixed string
		want  agent.Error
	}{
		{"an event that cannot be encoded", unencodableEvent, agent.Error{Code: "internal", Message: "an event could not be encoded"}},
		{"a replay cut short", replayTruncated, agent.Error{Code: "replay_truncated", Message: "this replay is cut short; read the dialog for the whole reply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if tt.fixed != string(want) {
				t.Fatalf("the stream writes\n%s\nan agent.Error encodes as\n%s", tt.fixed, want)
			}
		})
	}
}
