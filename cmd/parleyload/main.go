package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	// The generator and its fake model share the machine with the server
	// they measure, and keep little live heap: at Go's default pace their
	// own collections would add pauses to the latencies they report.
	// GOGC set in the environment overrides this.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(2000)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "parleyload:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	Server, Token, Parley, DatabaseURL, FakeAddr string
	FakeTLS                                      bool
	// RedisURL shares the started servers' limits through Redis.
	RedisURL string
	// Servers is how many servers share the database.
	Servers int
	// Sweep says Concurrency came from -sweep: print one row per level
	// and how throughput and latency hold from 10 dialogs to the most.
	Sweep          bool
	Concurrency    []int
	Modes          []string
	Duration       time.Duration
	TurnsPerDialog int
	Think          time.Duration
	// Slow prints each measured turn that takes longer, with the time it
	// started, to match a stall against a database's log.
	Slow    time.Duration
	Streams int
	JSON    bool
}

func parseConfig(args []string, log io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("parleyload", flag.ContinueOnError)
	fs.SetOutput(log)
	fs.StringVar(&c.Server, "server", "", "URL of a running Parley server; empty starts one")
	fs.StringVar(&c.Token, "token", "", "platform token of -server")
	fs.StringVar(&c.Parley, "parley", "", "parley binary to start; empty builds ./cmd/parley")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "PostgreSQL URL for the started server; empty uses SQLite")
	fs.StringVar(&c.FakeAddr, "fake-addr", "127.0.0.1:0", "address of the fake LLM")
	fs.BoolVar(&c.FakeTLS, "fake-tls", false, "serve the fake LLM over HTTPS and HTTP/2, as api.openai.com is reached")
	fs.StringVar(&c.RedisURL, "redis", os.Getenv("PARLEY_REDIS_URL"), "Redis URL the started servers share limits through (default $PARLEY_REDIS_URL); empty shares none")
	fs.IntVar(&c.Servers, "servers", 1, "number of servers to start on one PostgreSQL database (-database-url); dialogs go to them in turn")
	levels := fs.String("concurrency", "1,10,100", "comma-separated numbers of concurrent dialogs")
	sweep := fs.String("sweep", "", "comma-separated numbers of concurrent dialogs, e.g. 1,10,50,200: one row each and the ratio of the most to 10, without the memory phase")
	modes := fs.String("modes", "json,sse", "comma-separated answer forms: json, sse")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long each level runs")
	fs.IntVar(&c.TurnsPerDialog, "turns-per-dialog", 10, "messages per dialog before a worker starts a new one")
	fs.DurationVar(&c.Think, "think", 0, "pause after each answer per dialog; 0 drives the server flat out")
	fs.DurationVar(&c.Slow, "slow", 0, "print each measured turn slower than this, with its start time (UTC), to stderr; 0 prints none")
	fs.IntVar(&c.Streams, "streams", 1000, "idle event streams to open for the memory measure; 0 skips it")
	fs.BoolVar(&c.JSON, "json", false, "print the results as JSON")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	flagName := "-concurrency"
	if *sweep != "" {
		flagName, *levels, c.Sweep, c.Streams = "-sweep", *sweep, true, 0
	}
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return c, fmt.Errorf("%s: %q is not a positive number", flagName, f)
		}
		c.Concurrency = append(c.Concurrency, n)
	}
	for _, m := range strings.Split(*modes, ",") {
		m = strings.TrimSpace(m)
		if m != modeJSON && m != modeSSE {
			return c, fmt.Errorf("-modes: %q is neither json nor sse", m)
		}
		c.Modes = append(c.Modes, m)
	}
	switch {
	case c.Server != "" && c.Token == "":
		return c, errors.New("-server needs -token, the server's platform token")
	case c.Server != "" && c.DatabaseURL != "":
		return c, errors.New("-database-url configures a started server; -server uses its own database")
	case c.TurnsPerDialog < 1:
		return c, errors.New("-turns-per-dialog must be at least 1")
	case c.Servers < 1:
		return c, errors.New("-servers must be at least 1")
	case c.Servers > 1 && c.Server != "":
		return c, errors.New("-servers starts servers; with -server, start them yourself and measure one")
	case c.Servers > 1 && c.DatabaseURL == "":
		return c, fmt.Errorf("-servers %d needs -database-url: servers share a PostgreSQL database, and a SQLite data dir belongs to one server", c.Servers)
	case c.RedisURL != "" && c.Server != "":
		return c, errors.New("-redis configures the started servers; -server uses its own settings")
	}
	return c, nil
}

// results is everything one invocation measured.
type results struct {
	Machine  machine `json:"machine"`
	Database string  `json:"database"`
	Servers  int     `json:"servers"`
	Redis    bool    `json:"redis"`
	Levels   []level `json:"levels"`
	// Sweep compares, per mode, the most dialogs with 10 (-sweep).
	Sweep  []sweepRatio `json:"sweep,omitempty"`
	Memory *memory      `json:"memory,omitempty"`
	Notes  []string     `json:"notes,omitempty"`
}

type machine struct {
	CPUs      int    `json:"cpus"`
	CPU       string `json:"cpu"`
	GoVersion string `json:"go"`
	// LoadAvg is /proc/loadavg as the run started: other work on the
	// machine shares its cores with the server, and numbers taken on a
	// busy machine say so.
	LoadAvg string `json:"loadavg,omitempty"`
}

func run(ctx context.Context, args []string, stdout, log io.Writer) error {
	c, err := parseConfig(args, log)
	if err != nil {
		return err
	}
	fake, cleanupFake, err := fakeFor(c)
	if err != nil {
		return err
	}
	defer cleanupFake()
	res := results{Machine: machine{CPUs: runtime.NumCPU(), CPU: cpuModel(), GoVersion: runtime.Version(), LoadAvg: loadAvg()},
		Database: "sqlite", Servers: c.Servers, Redis: c.RedisURL != ""}
	if c.DatabaseURL != "" {
		res.Database = "postgres"
	}
	starter, cleanup, err := newStarter(ctx, c, fake, log)
	if err != nil {
		return err
	}
	defer cleanup()
	if res.Levels, err = measureTurns(ctx, c, starter, fake, log); err != nil {
		return err
	}
	if c.Sweep {
		res.Sweep = sweepRatios(res.Levels)
	}
	if c.Streams > 0 {
		mem, note, err := measureStreams(ctx, c, starter, fake, log)
		if err != nil {
			return err
		}
		res.Memory = mem
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	if c.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printResults(stdout, res)
	return nil
}

// fakeFor starts the fake LLM, with a fresh certificate for -fake-tls.
func fakeFor(c config) (*fakeLLM, func(), error) {
	if !c.FakeTLS {
		f, err := startFake(c.FakeAddr, nil)
		if err != nil {
			return nil, nil, err
		}
		return f, f.close, nil
	}
	dir, err := os.MkdirTemp("", "parleyload-tls-")
	if err != nil {
		return nil, nil, err
	}
	cert, err := newFakeCert(dir)
	if err == nil {
		var f *fakeLLM
		if f, err = startFake(c.FakeAddr, cert); err == nil {
			return f, func() { f.close(); os.RemoveAll(dir) }, nil
		}
	}
	os.RemoveAll(dir)
	return nil, nil, err
}

// starter gives the servers to measure: n fresh child processes on one
// database, or -server.
type starter func(ctx context.Context, gogc string, n int) (*target, error)

func newStarter(ctx context.Context, c config, fake *fakeLLM, log io.Writer) (starter, func(), error) {
	if c.Server != "" {
		fmt.Fprintf(log, "parleyload: the fake LLM is at %s; %s must use it as PARLEY_LLM_BASE_URL\n", fake.url, c.Server)
		if f := fake.certFile(); f != "" {
			fmt.Fprintf(log, "parleyload: and trust its certificate, e.g. SSL_CERT_FILE=%s\n", f)
		}
		t := &target{URL: strings.TrimRight(c.Server, "/"), Token: c.Token, stop: func() {}}
		return func(context.Context, string, int) (*target, error) { return t, nil }, func() {}, nil
	}
	bin, cleanup := c.Parley, func() {}
	if bin == "" {
		dir, err := os.MkdirTemp("", "parleyload-bin-")
		if err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if bin, err = buildParley(ctx, dir, log); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	return func(ctx context.Context, gogc string, n int) (*target, error) {
		return startServers(ctx, serverOptions{Binary: bin, DatabaseURL: c.DatabaseURL, LLMBaseURL: fake.url,
			LLMCertFile: fake.certFile(), RedisURL: c.RedisURL, GOGC: gogc, Log: log}, n)
	}, cleanup, nil
}

// measureTurns runs every mode at every concurrency against one server,
// each level after a short warm-up, then times raw model calls at each
// concurrency.
func measureTurns(ctx context.Context, c config, start starter, fake *fakeLLM, log io.Writer) ([]level, error) {
	t, err := start(ctx, "", c.Servers)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	maxConc := 0
	for _, n := range c.Concurrency {
		maxConc = max(maxConc, n)
	}
	s, err := newSession(ctx, t, newHTTPClient(maxConc))
	if err != nil {
		return nil, err
	}
	providers := map[int]latency{}
	var levels []level
	analysed := false // after the first warm-up, once the tables hold rows
	for _, mode := range c.Modes {
		for _, n := range c.Concurrency {
			warm := driveOptions{Mode: mode, Concurrency: n, Duration: min(c.Duration/5, 2*time.Second), TurnsPerDialog: c.TurnsPerDialog, Think: c.Think}
			drive(ctx, s, warm)
			if c.DatabaseURL != "" && !analysed {
				if err := analyze(ctx, c.DatabaseURL); err != nil {
					return nil, err
				}
				analysed = true
			}
			before, counted := processesUsage(t.pids)
			l := drive(ctx, s, driveOptions{Mode: mode, Concurrency: n, Duration: c.Duration, TurnsPerDialog: c.TurnsPerDialog, Think: c.Think, Slow: c.Slow, Log: log})
			if after, ok := processesUsage(t.pids); counted && ok {
				l.Server = perTurn(before, after, l.Turns)
			}
			if _, ok := providers[n]; !ok {
				if providers[n], err = providerLatency(ctx, fake, n, providerDuration(c), c.Think); err != nil {
					return nil, err
				}
			}
			l.withProvider(providers[n])
			fmt.Fprintf(log, "parleyload: %s x%d: %d turns, %.0f/s, p50 %.2f ms, p99 %.2f ms, %d errors%s\n",
				mode, n, l.Turns, l.TurnsPerSec, l.Turn.P50, l.Turn.P99, l.Errors, l.Server)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			levels = append(levels, l)
		}
	}
	return levels, nil
}

// providerDuration is how long raw model calls are timed: five seconds
// flat out, where that is thousands of calls, and a level's length when
// paced, so the p99 rests on as many calls as the turns' does.
func providerDuration(c config) time.Duration {
	if c.Think > 0 {
		return c.Duration
	}
	return min(c.Duration, 5*time.Second)
}

// measureStreams runs the idle-stream measure on a server of its own
// with a low GOGC, so its heap is live memory and not garbage.
func measureStreams(ctx context.Context, c config, start starter, fake *fakeLLM, log io.Writer) (*memory, string, error) {
	t, err := start(ctx, "5", 1)
	if err != nil {
		return nil, "", err
	}
	defer t.stop()
	s, err := newSession(ctx, t, newHTTPClient(c.Streams))
	if err != nil {
		return nil, "", err
	}
	m, err := idleStreams(ctx, s, fake, t.URL+"/metrics", c.Streams)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(log, "parleyload: %d idle streams: %.1f KiB heap+stacks (%.1f + %.1f), %.1f KiB RSS each\n",
		m.Streams, m.PerStreamKiB, m.PerStreamHeapKiB, m.PerStreamStackKiB, m.PerStreamRSSKiB)
	note := ""
	if c.Server != "" {
		note = "memory was read from -server as it runs: unless it runs with a low GOGC, its heap includes garbage"
	}
	return &m, note, nil
}

// loadAvg is the first three fields of /proc/loadavg, when there is one.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// cpuModel is the processor's name from /proc/cpuinfo, when there is one.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
