package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/openai/wire"
)

type wireReplyMessage struct {
	Role      string          `json:"role"`
	Content   *string         `json:"content"`
	ToolCalls []wire.ToolCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int              `json:"index"`
	Message      wireReplyMessage `json:"message"`
	FinishReason string           `json:"finish_reason"`
}

type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wire.Usage   `json:"usage"`
}

func completion(req *ChatRequest, r ServerReply, id int) wireCompletion {
	msg := wireReplyMessage{Role: "assistant", ToolCalls: replyCalls(r.ToolCalls, id)}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		msg.Content = &r.Text
	}
	return wireCompletion{
		ID: completionID(id), Object: "chat.completion", Created: time.Now().Unix(), Model: req.Model,
		Choices: []wireChoice{{Message: msg, FinishReason: r.finishReason()}},
		Usage:   usageOf(req, r),
	}
}

func completionID(id int) string { return fmt.Sprintf("chatcmpl-fake%d", id) }

func replyCalls(calls []ServerCall, id int) []wire.ToolCall {
	out := make([]wire.ToolCall, len(calls))
	for i, c := range calls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("call_fake%d_%d", id, i)
		}
		out[i] = wire.ToolCall{ID: callID, Type: "function", Function: wire.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}

// usageOf returns the scripted usage, or a deterministic estimate at four
// characters a token so budgets and metering see plausible numbers.
func usageOf(req *ChatRequest, r ServerReply) wire.Usage {
	var u llm.Usage
	if r.Usage != nil {
		u = *r.Usage
	} else {
		in := 0
		for _, m := range req.Messages {
			in += len(m.Content) + 4
			for _, c := range m.ToolCalls {
				in += len(c.Function.Name) + len(c.Function.Arguments)
			}
		}
		out := len(r.Text)
		for _, c := range r.ToolCalls {
			out += len(c.Name) + len(c.Arguments)
		}
		u = llm.Usage{InputTokens: in/4 + 1, OutputTokens: out/4 + 1}
	}
	return wire.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.Total()}
}

type wireDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []wire.ToolCall `json:"tool_calls,omitempty"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wire.Usage       `json:"usage,omitempty"`
}

// streamWriter writes server-sent chunks, counting them for CutAfterChunks
// and HoldAfterChunks.
type streamWriter struct {
	w       http.ResponseWriter
	r       *http.Request
	flusher http.Flusher
	base    wireChunk
	sent    int
	cut     int
	hold    int
	delay   time.Duration
}

// send writes one chunk; it reports false once the client has gone.
func (sw *streamWriter) send(choices []wireChunkChoice, usage *wire.Usage) bool {
	c := sw.base
	c.Choices, c.Usage = choices, usage
	return sw.write("", c)
}

// write sends v as one server-sent event, named event unless that is "".
func (sw *streamWriter) write(event string, v any) bool {
	if sw.hold > 0 && sw.sent >= sw.hold {
		<-sw.r.Context().Done()
		return false
	}
	if sw.sent > 0 && !waitOrDone(sw.r, sw.delay) {
		return false
	}
	b, _ := json.Marshal(v)
	if event != "" {
		if _, err := fmt.Fprintf(sw.w, "event: %s\n", event); err != nil {
			return false
		}
	}
	if _, err := fmt.Fprintf(sw.w, "data: %s\n\n", b); err != nil {
		return false
	}
	sw.flusher.Flush()
	sw.sent++
	if sw.cut > 0 && sw.sent >= sw.cut {
		// Drop the connection without the final chunk or [DONE], the way a
		// dying upstream does.
		panic(http.ErrAbortHandler)
	}
	return true
}

func (sw *streamWriter) delta(d wireDelta) bool {
	return sw.send([]wireChunkChoice{{Delta: d}}, nil)
}

// stream sends the reply as the API does: a role chunk, text in fragments,
// each tool call's id and name and then its arguments in fragments, a chunk
// with the finish reason, a usage chunk when asked for, and [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *ChatRequest, reply ServerReply, id int) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := &streamWriter{w: w, r: r, flusher: flusher, delay: s.opts.ChunkDelay,
		base: wireChunk{ID: completionID(id), Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: req.Model}}
	if reply.Fault != nil {
		sw.cut, sw.hold = reply.Fault.CutAfterChunks, reply.Fault.HoldAfterChunks
		sw.delay += reply.Fault.ChunkDelay
	}
	empty := ""
	if !sw.delta(wireDelta{Role: "assistant", Content: &empty}) {
		return
	}
	for _, piece := range fragments(reply.Text, s.opts.FragmentSize) {
		if !sw.delta(wireDelta{Content: &piece}) {
			return
		}
	}
	for i, c := range replyCalls(reply.ToolCalls, id) {
		index := i
		head := wire.ToolCall{Index: &index, ID: c.ID, Type: "function", Function: wire.FunctionCall{Name: c.Function.Name}}
		if !sw.delta(wireDelta{ToolCalls: []wire.ToolCall{head}}) {
			return
		}
		for _, piece := range fragments(c.Function.Arguments, s.opts.FragmentSize) {
			frag := wire.ToolCall{Index: &index, Function: wire.FunctionCall{Arguments: piece}}
			if !sw.delta(wireDelta{ToolCalls: []wire.ToolCall{frag}}) {
				return
			}
		}
	}
	finish := reply.finishReason()
	if !sw.send([]wireChunkChoice{{Delta: wireDelta{}, FinishReason: &finish}}, nil) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := usageOf(req, reply)
		if !sw.send([]wireChunkChoice{}, &u) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// fragments splits s into pieces of at most n runes.
func fragments(s string, n int) []string {
	var out []string
	runes := []rune(s)
	for len(runes) > 0 {
		k := min(n, len(runes))
		out = append(out, string(runes[:k]))
		runes = runes[k:]
	}
	return out
}
