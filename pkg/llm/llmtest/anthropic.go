package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// messages serves POST /v1/messages, Anthropic's Messages API, from the same
// script as the chat-completions route.
func (s *Server) messages(w http.ResponseWriter, r *http.Request, rec *Record) {
	if e := s.authorizeAnthropic(r); e != nil {
		s.failAnthropic(w, rec, e, "")
		return
	}
	if r.Method != http.MethodPost {
		s.failAnthropic(w, rec, &anthropicError{status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: fmt.Sprintf("Method %s not allowed for %s", r.Method, r.URL.Path)}, "")
		return
	}
	var req MessagesRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.failAnthropic(w, rec, anthropicInvalid("%v", err), "")
		return
	}
	s.mu.Lock()
	rec.Messages = &req
	s.mu.Unlock()
	if e := validateMessagesRequest(&req); e != nil {
		s.failAnthropic(w, rec, e, "")
		return
	}
	var handle func() ServerReply
	if s.opts.MessagesHandler != nil {
		handle = func() ServerReply { return s.opts.MessagesHandler(&req) }
	}
	reply, ok := s.nextFor(handle)
	if !ok {
		s.failAnthropic(w, rec, anthropicInvalid("llmtest: no scripted reply left and no Handler set (%d requests so far)", len(s.Requests())), "")
		return
	}
	f := reply.Fault
	if f == nil {
		f = &Fault{}
	}
	if !waitOrDone(r, s.opts.Latency+f.Latency) {
		s.setStatus(rec, 499)
		return
	}
	if f.Disconnect {
		panic(http.ErrAbortHandler)
	}
	if f.Status != 0 && !(f.InStream && req.Stream) {
		s.failAnthropic(w, rec, anthropicFault(f), f.RetryAfter)
		return
	}
	s.setStatus(rec, http.StatusOK)
	msg := s.anthropicMessage(&req, reply, s.nextID(), len(rec.Body))
	if req.Stream {
		s.streamAnthropic(w, r, msg, f)
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

// authorizeAnthropic wants x-api-key (Anthropic takes no bearer token) and
// anthropic-version, as the API does. A wrong key is echoed back in full:
// clients must keep error text free of keys.
func (s *Server) authorizeAnthropic(r *http.Request) *anthropicError {
	key := r.Header.Get("X-Api-Key")
	switch {
	case key == "":
		return &anthropicError{status: http.StatusUnauthorized, Type: "authentication_error", Message: "x-api-key header is required"}
	case s.opts.APIKey != "" && key != s.opts.APIKey:
		return &anthropicError{status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key: " + key}
	}
	if v := r.Header.Get("Anthropic-Version"); !anthropicVersions[v] {
		if v == "" {
			return anthropicInvalid("anthropic-version: header is required")
		}
		return anthropicInvalid("anthropic-version: %q is not a valid version", v)
	}
	return nil
}

func (s *Server) failAnthropic(w http.ResponseWriter, rec *Record, e *anthropicError, retryAfter string) {
	s.setStatus(rec, e.status)
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Request-Id", "req_fake")
	writeJSON(w, e.status, anthropicErrorBody(e))
}

func anthropicErrorBody(e *anthropicError) map[string]any {
	return map[string]any{"type": "error", "error": e, "request_id": "req_fake"}
}

// wireMessage is the API's reply object.
type wireMessage struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []json.RawMessage  `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        wireAnthropicUsage `json:"usage"`
	// blocks keeps the content unmarshalled, for streaming it.
	blocks []MessagesBlock
}

type wireAnthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// anthropicMessage builds the reply: thinking (signed) when the request
// turned it on, text, then tool uses; usage as scripted or estimated, with
// the prompt cache emulated.
func (s *Server) anthropicMessage(req *MessagesRequest, reply ServerReply, id, bodyLen int) *wireMessage {
	msg := &wireMessage{ID: fmt.Sprintf("msg_fake%d", id), Type: "message", Role: "assistant", Model: req.Model}
	if reply.Thinking != "" && thinkingOn(req) {
		sig := signThinking(reply.Thinking)
		msg.blocks = append(msg.blocks, MessagesBlock{Type: "thinking", Thinking: &reply.Thinking, Signature: &sig})
	}
	if reply.Text != "" || len(reply.ToolCalls) == 0 {
		text := reply.Text
		msg.blocks = append(msg.blocks, MessagesBlock{Type: "text", Text: &text})
	}
	for i, c := range reply.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("toolu_fake%d_%d", id, i)
		}
		msg.blocks = append(msg.blocks, MessagesBlock{Type: "tool_use", ID: callID, Name: c.Name, Input: json.RawMessage(c.Arguments)})
	}
	for _, b := range msg.blocks {
		raw, _ := json.Marshal(b)
		msg.Content = append(msg.Content, raw)
	}
	stop := anthropicStopReason(reply)
	msg.StopReason = &stop
	msg.Usage = s.anthropicUsage(req, reply, bodyLen)
	return msg
}

func anthropicStopReason(r ServerReply) string {
	switch r.finishReason() {
	case "stop":
		return "end_turn"
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	default:
		return r.FinishReason
	}
}

// anthropicUsage reports usage the way the API does: input_tokens counts
// only what came after the last cache breakpoint. A prefix seen before is a
// cache read; a new one is a cache write.
func (s *Server) anthropicUsage(req *MessagesRequest, reply ServerReply, bodyLen int) wireAnthropicUsage {
	var read, write int
	s.mu.Lock()
	if s.cached == nil {
		s.cached = map[string]bool{}
	}
	for _, p := range cachePrefixes(req) {
		if s.cached[p] {
			read = len(p)/4 + 1
		} else {
			s.cached[p] = true
			write = len(p)/4 + 1 - read
		}
	}
	s.mu.Unlock()
	if reply.Usage != nil {
		u := *reply.Usage
		return wireAnthropicUsage{InputTokens: u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens, OutputTokens: u.OutputTokens,
			CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheWriteTokens}
	}
	out := len(reply.Text) + len(reply.Thinking)
	for _, c := range reply.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	total := max(bodyLen/4+1, read+write+1)
	return wireAnthropicUsage{InputTokens: total - read - write, OutputTokens: out/4 + 1,
		CacheReadInputTokens: read, CacheCreationInputTokens: write}
}

// sseWriter writes Anthropic's named server-sent events, counting them for
// CutAfterChunks.
type sseWriter struct {
	sw *streamWriter
}

func (e sseWriter) send(event string, v any) bool { return e.sw.write(event, v) }

// streamAnthropic sends msg as the API streams it: message_start, a ping,
// each block's content_block_start, deltas in fragments and
// content_block_stop, then message_delta with the stop reason and output
// tokens, and message_stop. An InStream fault is an error event after
// message_start.
func (s *Server) streamAnthropic(w http.ResponseWriter, r *http.Request, msg *wireMessage, f *Fault) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(http.StatusOK)
	ev := sseWriter{sw: &streamWriter{w: w, r: r, flusher: flusher, delay: s.opts.ChunkDelay, cut: f.CutAfterChunks, hold: f.HoldAfterChunks}}
	start := *msg
	start.Content, start.StopReason = []json.RawMessage{}, nil
	start.Usage.OutputTokens = 1
	if !ev.send("message_start", map[string]any{"type": "message_start", "message": start}) {
		return
	}
	if f.Status != 0 {
		ev.send("error", anthropicErrorBody(anthropicFault(f)))
		return
	}
	if !ev.send("ping", map[string]string{"type": "ping"}) {
		return
	}
	for i, b := range msg.blocks {
		if !s.streamBlock(ev, i, b) {
			return
		}
	}
	delta := map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": msg.Usage.OutputTokens}}
	if !ev.send("message_delta", delta) {
		return
	}
	ev.send("message_stop", map[string]string{"type": "message_stop"})
}

// streamBlock sends one content block: its start with empty content, its
// content in fragments, and its stop.
func (s *Server) streamBlock(ev sseWriter, i int, b MessagesBlock) bool {
	head := map[string]any{"type": b.Type}
	var deltas []map[string]any
	switch b.Type {
	case "thinking":
		head["thinking"], head["signature"] = "", ""
		for _, piece := range fragments(*b.Thinking, s.opts.FragmentSize) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": piece})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": *b.Signature})
	case "text":
		head["text"] = ""
		for _, piece := range fragments(*b.Text, s.opts.FragmentSize) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": piece})
		}
	case "tool_use":
		head["id"], head["name"], head["input"] = b.ID, b.Name, map[string]any{}
		for _, piece := range fragments(strings.TrimSpace(string(b.Input)), s.opts.FragmentSize) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": piece})
		}
	}
	if !ev.send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": head}) {
		return false
	}
	for _, d := range deltas {
		if !ev.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}) {
			return false
		}
	}
	return ev.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}
