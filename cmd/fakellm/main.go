package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log io.Writer) error {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(log)
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on")
	key := fs.String("key", "", "API key clients must send (a bearer token, or x-api-key for the Anthropic route); empty accepts any")
	script := fs.String("script", "", "JSON file of scripted replies (see the command's doc)")
	opts := llmtest.Options{Handler: echo, MessagesHandler: echoMessages}
	fs.DurationVar(&opts.Latency, "latency", 0, "delay before every reply")
	fs.DurationVar(&opts.ChunkDelay, "chunk-delay", 0, "pause between streamed chunks, e.g. 30ms for a typing effect")
	fs.IntVar(&opts.FragmentSize, "fragment", 8, "characters per streamed chunk")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts.APIKey = *key
	replies, err := loadScript(*script)
	if err != nil {
		return err
	}
	fake := llmtest.NewHandler(opts)
	fake.Enqueue(replies...)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "fakellm: serving http://%s/v1 (OpenAI) and http://%s (Anthropic) with %d scripted replies, then echoing\n", ln.Addr(), ln.Addr(), len(replies))
	return serve(ctx, ln, fake)
}

// serve runs h on ln until ctx ends, then gives open streams a moment.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			return err
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

func loadScript(path string) ([]llmtest.ServerReply, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var replies []llmtest.ServerReply
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&replies); err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return replies, nil
}

// echo answers whatever came last, so a demo conversation never runs dry and
// a tool loop always ends. A bot with a knowledge base gets answers that
// cite it: with search_knowledge offered, the user's text is searched
// first, and numbered passages (the tool's, or auto mode's in the system
// prompt) are answered with the first one's text and its [1] marker.
func echo(req *llmtest.ChatRequest) llmtest.ServerReply {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		last := req.Messages[n-1]
		if cited, ok := citeFirst(last.Text()); ok {
			return llmtest.ServerReply{Text: cited}
		}
		return llmtest.ServerReply{Text: fmt.Sprintf("Tool %s returned: %s", last.ToolCallID, last.Text())}
	}
	if slices.Contains(req.ToolNames(), searchKnowledge) {
		args, _ := json.Marshal(map[string]string{"query": req.LastUserText()})
		return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_search", Name: searchKnowledge, Arguments: string(args)}}}
	}
	if _, passages, ok := strings.Cut(req.System(), autoPassages); ok {
		if cited, ok := citeFirst(passages); ok {
			return llmtest.ServerReply{Text: cited}
		}
	}
	return llmtest.ServerReply{Text: "You said: " + req.LastUserText()}
}

// The knowledge tool and auto mode's prompt heading (docs/knowledge.md).
const (
	searchKnowledge = "search_knowledge"
	autoPassages    = "## Knowledge base passages\n"
)

// citeFirst answers numbered passages ("[1] title (locator) url" and its
// text) with the first passage's text and its marker.
func citeFirst(passages string) (string, bool) {
	at := strings.Index(passages, "[1] ")
	if at < 0 {
		return "", false
	}
	_, body, _ := strings.Cut(passages[at:], "\n")
	text, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	if text == "" {
		return "", false
	}
	return "From the knowledge base: " + text + " [1]", true
}

// echoMessages is echo for Anthropic's Messages API.
func echoMessages(req *llmtest.MessagesRequest) llmtest.ServerReply {
	if n := len(req.Messages); n > 0 {
		for _, b := range req.Messages[n-1].Content {
			if b.Type == "tool_result" {
				return llmtest.ServerReply{Text: fmt.Sprintf("Tool %s returned: %s", b.ToolUseID, b.Content)}
			}
		}
	}
	return llmtest.ServerReply{Text: "You said: " + req.LastUserText()}
}
