package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
)

// chatConfig is a small bot that answers in text.
const chatConfig = `{"basic_settings": {"name": "Echo", "greeting": "Hi"}, "native_tools": ["current_time"], "llm": {"model": "gpt-4o-mini"}}`

const e2eToken = "e2e-platform-token-with-enough-entropy"

// chatServer points the program's LLM settings at the strict fake server.
func chatServer(t *testing.T, env parleyEnv, opts llmtest.Options) *llmtest.Server {
	t.Helper()
	opts.APIKey = "sk-e2e"
	llm := llmtest.NewServer(t, opts)
	env["PARLEY_LLM_BASE_URL"] = llm.URL()
	env["PARLEY_LLM_API_KEY"] = "sk-e2e"
	env["PARLEY_PLATFORM_TOKEN"] = e2eToken
	return llm
}

// setupDialog creates a tenant, a published bot and a dialog on the server
// at base and returns the tenant's admin key and the dialog id.
func setupDialog(t *testing.T, base string) (string, string) {
	t.Helper()
	ctx := context.Background()
	created, err := apiclient.New(base, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	key := created.APIKey.Key
	admin := apiclient.New(base, key)
	if _, err := admin.CreateBot(ctx, "acme", "echo", json.RawMessage(chatConfig)); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Publish(ctx, "acme", "echo", 1); err != nil {
		t.Fatal(err)
	}
	return key, newDialog(t, base, key)
}

func newDialog(t *testing.T, base, key string) string {
	t.Helper()
	var d struct {
		ID string `json:"id"`
	}
	if err := apiclient.New(base, key).Do(context.Background(), "POST", "/v1/tenants/acme/bots/echo/dialogs", map[string]any{}, &d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// openStream posts a message asking for SSE and returns the response.
func openStream(t *testing.T, base, key, dialog, text string) *http.Response {
	t.Helper()
	body := strings.NewReader(fmt.Sprintf(`{"text": %q}`, text))
	req, err := http.NewRequest("POST", base+"/v1/tenants/acme/dialogs/"+dialog+"/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("message: %d %s", resp.StatusCode, b)
	}
	return resp
}

// nextEvent reads SSE lines until the next event and returns its type.
func nextEvent(sc *bufio.Scanner) (string, bool) {
	for sc.Scan() {
		if typ, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			return typ, true
		}
	}
	return "", false
}

// dialogMessages returns the dialog's messages as "kind:status:text".
func dialogMessages(t *testing.T, base, key, dialog string) []string {
	t.Helper()
	var d struct {
		Messages []struct{ Kind, Status, Text string }
	}
	if err := apiclient.New(base, key).Do(context.Background(), "GET", "/v1/tenants/acme/dialogs/"+dialog, nil, &d); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(d.Messages))
	for i, m := range d.Messages {
		out[i] = m.Kind + ":" + m.Status + ":" + m.Text
	}
	return out
}

func TestADialogThroughTheRealProgram(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		llm := chatServer(t, env, llmtest.Options{FragmentSize: 3})
		srv := startParley(t, env)
		key, d := setupDialog(t, srv.URL)
		llm.Enqueue(llmtest.ServerReply{Text: "Hello from the fake model."})
		resp := openStream(t, srv.URL, key, d, "hi")
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var got []string
		for {
			typ, ok := nextEvent(sc)
			if !ok {
				break
			}
			if len(got) == 0 || typ != "text_delta" || got[len(got)-1] != "text_delta" {
				got = append(got, typ)
			}
		}
		if want := "dialog message turn_start text_delta message turn_end done"; strings.Join(got, " ") != want {
			t.Fatalf("events %v, want %s", got, want)
		}
		if m := dialogMessages(t, srv.URL, key, d); len(m) != 2 || m[1] != "assistant:complete:Hello from the fake model." {
			t.Fatalf("messages %q", m)
		}
	})
}

func TestShutdownEndsOpenStreamsWithAnErrorEvent(t *testing.T) {
	t.Parallel()
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}
	llm := chatServer(t, env, llmtest.Options{FragmentSize: 2, ChunkDelay: 200 * time.Millisecond})
	srv := startParley(t, env)
	key, d := setupDialog(t, srv.URL)
	llm.Enqueue(llmtest.ServerReply{Text: strings.Repeat("a long answer ", 50)})
	resp := openStream(t, srv.URL, key, d, "talk slowly")
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for {
		typ, ok := nextEvent(sc)
		if !ok {
			t.Fatal("the stream ended before any text")
		}
		if typ == "text_delta" {
			break
		}
	}
	stopped := make(chan int, 1)
	go func() { stopped <- srv.stop() }()
	var tail []string
	var errorData string
	for {
		typ, ok := nextEvent(sc)
		if !ok {
			break
		}
		if typ != "text_delta" {
			tail = append(tail, typ)
		}
		if typ == "error" && sc.Scan() {
			errorData = sc.Text()
		}
	}
	if strings.Join(tail, " ") != "turn_end error done" {
		t.Fatalf("the stream ended with %v, want turn_end error done", tail)
	}
	// The client cancelled nothing: the error says the server restarts,
	// and that the same request may be sent again.
	if !strings.Contains(errorData, `"code":"server_restarting"`) || !strings.Contains(errorData, `"retryable":true`) {
		t.Fatalf("the error event %s; want a retryable server_restarting", errorData)
	}
	if code := <-stopped; code != 0 {
		t.Fatalf("parley serve exited %d", code)
	}
}

// TestHelperServe is `parley serve` in a child process for the crash
// tests (startChild, and startProcess outside a long run); it does nothing
// in a normal run.
func TestHelperServe(t *testing.T) {
	if os.Getenv("PARLEY_E2E_CHILD") != "1" {
		t.Skip("only runs as the crash test's child process")
	}
	m := &Main{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(m.Run(context.Background(), []string{"serve"}))
}

// startChild runs `parley serve` in a child process and returns its base
// URL and the process.
func startChild(t *testing.T, env parleyEnv) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServe$")
	cmd.Env = append(os.Environ(), "PARLEY_E2E_CHILD=1", "PARLEY_ADDR=127.0.0.1:0")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "Parley listening on "); ok {
			go io.Copy(io.Discard, out)
			return addr, cmd
		}
	}
	t.Fatal("the child exited before listening")
	return "", nil
}

func TestACrashMidStreamLeavesTheReplyInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	t.Parallel()
	dir := t.TempDir()
	env := parleyEnv{"PARLEY_DATA_DIR": dir}
	llm := chatServer(t, env, llmtest.Options{FragmentSize: 2, ChunkDelay: 100 * time.Millisecond})
	base, child := startChild(t, env)
	key, d := setupDialog(t, base)
	llm.Enqueue(llmtest.ServerReply{Text: strings.Repeat("never finished ", 40)})
	resp := openStream(t, base, key, d, "tell me a story")
	sc := bufio.NewScanner(resp.Body)
	// The fake sends a fragment at most every 100 ms, so fifteen fragments
	// span more than the second after which the server writes the text so
	// far to the reply's row.
	for deltas := 0; deltas < 15; {
		typ, ok := nextEvent(sc)
		if !ok {
			t.Fatal("the stream ended early")
		}
		if typ == "text_delta" {
			deltas++
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	resp.Body.Close()

	base, _ = startChild(t, env)
	// The dead server's lease would keep the dialog busy for its TTL;
	// the test lets that time pass by expiring it.
	st, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.DB().Exec("UPDATE dialog_leases SET expires_at = ?", time.Now().UTC().Add(-time.Hour)).Error; err != nil {
		t.Fatal(err)
	}
	t.Run("the user message is there and the reply is interrupted with the text streamed so far", func(t *testing.T) {
		m := dialogMessages(t, base, key, d)
		if len(m) != 2 || m[0] != "user:complete:tell me a story" || !strings.HasPrefix(m[1], "assistant:interrupted:never finished") {
			t.Fatalf("messages %q", m)
		}
	})
	t.Run("the next message is answered", func(t *testing.T) {
		llm.Enqueue(llmtest.ServerReply{Text: "Sorry, where were we?"})
		var turn struct {
			Done struct{ Text string }
		}
		err := apiclient.New(base, key).Do(context.Background(), "POST", "/v1/tenants/acme/dialogs/"+d+"/messages", map[string]any{"text": "hello?"}, &turn)
		if err != nil || turn.Done.Text != "Sorry, where were we?" {
			t.Fatalf("turn %+v, %v", turn, err)
		}
		last := llm.LastRequest()
		for _, msg := range last.Messages {
			if msg.Role == "assistant" {
				t.Fatal("the interrupted reply was sent to the model")
			}
		}
	})
}
