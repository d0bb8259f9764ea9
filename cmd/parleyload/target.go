package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// target is the Parley server under load, or the servers sharing one
// database: URL is the first, More the others.
type target struct {
	URL   string
	More  []string
	Token string // the platform token
	// pids are the processes of the servers parleyload started; none
	// for -server or a server in this process.
	pids []int
	stop func()
}

// serverOptions start a `parley serve` child process.
type serverOptions struct {
	Binary      string // the parley binary
	DatabaseURL string // "" uses SQLite in a fresh data dir
	LLMBaseURL  string
	// LLMCertFile, when set, is the only root the server trusts
	// (SSL_CERT_FILE): the fake's own certificate.
	LLMCertFile string
	// RedisURL, when set, shares the limits through Redis.
	RedisURL string
	GOGC     string // "" leaves the default
	Token    string // the platform token; "" makes one
	Log      io.Writer
}

// buildParley compiles cmd/parley into dir, so the load runs against the
// real program as it is in this tree.
func buildParley(ctx context.Context, dir string, log io.Writer) (string, error) {
	bin := filepath.Join(dir, "parley")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/parleyhq/parley/cmd/parley")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build cmd/parley (run from the repository, or pass -parley BIN): %w", err)
	}
	return bin, nil
}

// startServers starts n servers on o's database, one after another (the
// first migrates it), with one platform token.
func startServers(ctx context.Context, o serverOptions, n int) (*target, error) {
	if o.Token == "" {
		o.Token = randomToken()
	}
	var all []*target
	stop := func() {
		for _, t := range all {
			t.stop()
		}
	}
	for range n {
		t, err := startServer(ctx, o)
		if err != nil {
			stop()
			return nil, err
		}
		all = append(all, t)
	}
	first := *all[0]
	for _, t := range all[1:] {
		first.More = append(first.More, t.URL)
		first.pids = append(first.pids, t.pids...)
	}
	first.stop = stop
	return &first, nil
}

// startServer runs `parley serve` on a free loopback port with its own data
// dir and waits until it says where it listens.
func startServer(ctx context.Context, o serverOptions) (*target, error) {
	dir, err := os.MkdirTemp("", "parleyload-")
	if err != nil {
		return nil, err
	}
	token := cmp.Or(o.Token, randomToken())
	cmd := exec.Command(o.Binary, "serve")
	cmd.Env = append(os.Environ(),
		"PARLEY_ADDR=127.0.0.1:0", "PARLEY_DATA_DIR="+dir, "PARLEY_DATABASE_URL="+o.DatabaseURL,
		"PARLEY_PLATFORM_TOKEN="+token, "PARLEY_LLM_BASE_URL="+o.LLMBaseURL, "PARLEY_LLM_API_KEY=fake",
		"PARLEY_LLM_MODEL=fake-model", "PARLEY_LOG_LEVEL=warn",
		// The load is one tenant and one key on purpose; the limits would
		// measure themselves.
		"PARLEY_RATE_LIMIT_TENANT=off", "PARLEY_RATE_LIMIT_KEY=off")
	if o.RedisURL != "" {
		// With no limit set a server never asks Redis; these are limits no
		// run reaches, so every message pays the round trip it costs.
		cmd.Env = append(cmd.Env, "PARLEY_REDIS_URL="+o.RedisURL,
			"PARLEY_DAILY_TOKEN_QUOTA=1000000000000", "PARLEY_STREAM_LIMIT_TENANT=1000000")
	}
	if o.LLMCertFile != "" {
		cmd.Env = append(cmd.Env, "SSL_CERT_FILE="+o.LLMCertFile)
	}
	if o.GOGC != "" {
		cmd.Env = append(cmd.Env, "GOGC="+o.GOGC)
	}
	cmd.Stderr = o.Log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s serve: %w", o.Binary, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		os.RemoveAll(dir)
	}
	url, err := listeningURL(ctx, out)
	if err != nil {
		stop()
		return nil, err
	}
	return &target{URL: url, Token: token, pids: []int{cmd.Process.Pid}, stop: stop}, nil
}

// listeningURL reads the server's start-up lines until the one naming its
// address, then keeps draining them so the server never blocks on stdout.
func listeningURL(ctx context.Context, out io.Reader) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "Parley listening on "); ok {
				found <- strings.TrimSpace(u)
			}
		}
		close(found)
	}()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	select {
	case u, ok := <-found:
		if !ok {
			return "", fmt.Errorf("parley serve exited before listening (its errors are above)")
		}
		return u, nil
	case <-ctx.Done():
		return "", fmt.Errorf("parley serve did not say where it listens: %w", ctx.Err())
	}
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
