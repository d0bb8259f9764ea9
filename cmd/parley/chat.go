package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/botrun"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
	"github.com/parleyhq/parley/pkg/tool/toolbox"
)

// chatFlags are the flags of parley chat.
type chatFlags struct {
	config     string
	vars       keyValues
	secrets    keyValues
	json       bool
	allowStdio bool
}

// keyValues collects repeated k=v flags.
type keyValues map[string]string

func (kv keyValues) String() string { return fmt.Sprintf("%d values", len(kv)) }

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return errors.New("want NAME=VALUE")
	}
	kv[strings.TrimSpace(k)] = v
	return nil
}

func (m *Main) parseChatFlags(args []string) (chatFlags, error) {
	f := chatFlags{vars: keyValues{}, secrets: keyValues{}}
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.StringVar(&f.config, "config", "", "agent config file (JSON)")
	fs.Var(f.vars, "var", "context variable NAME=VALUE (repeatable)")
	fs.Var(f.secrets, "secret", "tenant secret NAME=VALUE for {{secrets.NAME}} (repeatable)")
	fs.BoolVar(&f.json, "json", false, "write one event JSON object per line instead of the conversation")
	fs.BoolVar(&f.allowStdio, "allow-stdio", false, "allow the config's stdio MCP servers to start")
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: parley chat --config FILE [--var k=v]... [--secret NAME=VALUE]... [--json] [--allow-stdio]")
		fmt.Fprintln(m.Stderr, "\nReads user messages line by line from stdin and answers with the real loop and tools.")
		fs.PrintDefaults()
		printSettings(m.Stderr)
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.config == "" || fs.NArg() > 0 {
		fs.Usage()
		return f, errUsage
	}
	return f, nil
}

// chat talks to a bot in the terminal: one run of the loop per stdin line.
func (m *Main) chat(ctx context.Context, args []string) error {
	f, err := m.parseChatFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return errUsage
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	// --allow-stdio trusts the config, whose author runs it here: any
	// command and any env key but the ones no config may ever set.
	settings.MCPStdio.AllowAll = f.allowStdio
	bot, err := loadBot(f.config, configOptions(settings))
	if err != nil {
		return err
	}
	if err := checkChatVars(bot, f.vars); err != nil {
		fmt.Fprintf(m.Stderr, "parley chat: %v\n", err)
		return errUsage
	}
	vars := dialogVars(bot, f)
	tools, closeTools, err := m.chatTools(ctx, settings, f, bot, vars)
	if err != nil {
		return err
	}
	defer closeTools()
	resolver, err := chatResolver(settings, bot)
	if err != nil {
		return err
	}
	c := &chatSession{m: m, json: f.json, in: bufio.NewScanner(m.Stdin)}
	c.in.Buffer(make([]byte, 64<<10), 1<<20)
	cfg := botrun.Config(bot, vars, resolver, tools)
	cfg.Sink = c
	// Events carry fixed error texts, fit for end users; the operator at
	// this terminal gets the detail too.
	cfg.Hooks.OnError = func(_ context.Context, err error) { fmt.Fprintf(m.Stderr, "error detail: %v\n", err) }
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	c.agent = a
	return c.run(ctx, bot)
}

func loadBot(path string, opts botconfig.Options) (*botconfig.Bot, error) {
	cfg, err := opts.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	bot, err := opts.Compile(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid config:\n%w", path, err)
	}
	return bot, nil
}

// checkChatVars holds --var to what the server accepts for a dialog: the
// config's declared context variables (every required one given) and the
// system variables, which a terminal session may override.
func checkChatVars(bot *botconfig.Bot, given map[string]string) error {
	known := map[string]bool{}
	for _, name := range botconfig.SystemVariables() {
		known[name] = true
	}
	var problems []string
	for _, cv := range bot.ContextVariables {
		known[cv.Name] = true
		if _, ok := given[cv.Name]; cv.Required && !ok && cv.Default == "" {
			problems = append(problems, fmt.Sprintf("the config requires --var %s=VALUE (%s)", cv.Name, cv.Description))
		}
	}
	for name := range given {
		if !known[name] {
			problems = append(problems, fmt.Sprintf("--var %s: the config declares no context variable %q", name, name))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return errors.New(strings.Join(problems, "; "))
}

// dialogVars fills the system variables for a terminal dialog, then the
// --var and --secret values.
func dialogVars(bot *botconfig.Bot, f chatFlags) botconfig.Vars {
	id := make([]byte, 8)
	rand.Read(id) // never returns an error: it crashes the program instead
	vars := botconfig.Vars{
		"dialog_id":  "cli-" + hex.EncodeToString(id),
		"tenant_id":  "local",
		"bot_id":     bot.ChatbotID,
		"chatbot_id": bot.ChatbotID,
		"user_id":    "cli",
		"channel":    "cli",
		"locale":     "en",
		"now":        time.Now().UTC().Format(time.RFC3339),
	}
	for k, v := range f.vars {
		vars[k] = v
	}
	for k, v := range f.secrets {
		vars["secrets."+k] = v
	}
	return vars
}

// chatTools builds the bot's tools exactly as the server does, through the
// same outbound policy; with --allow-stdio (s.MCPStdio.AllowAll) the
// config's stdio MCP servers run even when PARLEY_MCP_STDIO_ALLOW does not
// list them. The returned func
// stops the MCP connections.
func (m *Main) chatTools(ctx context.Context, s Settings, f chatFlags, bot *botconfig.Bot, vars botconfig.Vars) (*tool.Set, func() error, error) {
	policy, err := outbound.ParsePolicy(s.OutboundAllow, s.OutboundPorts)
	if err != nil {
		return nil, nil, fmt.Errorf("outbound policy: %w", err)
	}
	client := outbound.NewClient(policy, outbound.Options{})
	pool := mcptool.New(mcptool.Options{HTTPClient: client, Stdio: s.MCPStdio, StdioEnv: s.StdioEnv})
	box, err := toolbox.Build(ctx, bot, toolbox.Options{TenantID: "local", Vars: vars, HTTPClient: client, MCP: pool, Natives: builtin.NewRegistry()})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	for _, w := range box.Warnings {
		fmt.Fprintf(m.Stderr, "parley chat: warning: %s\n", w)
	}
	for _, a := range bot.Agents {
		fmt.Fprintf(m.Stderr, "parley chat: warning: agent %s is left out: it runs the tenant's bot %q, which only the server has\n", a.Name, a.Bot)
	}
	return box.Set, pool.Close, nil
}

// chatResolver uses the bot's model (or PARLEY_LLM_MODEL) on the configured
// OpenAI-compatible API, then its fallback models after retryable failures.
func chatResolver(s Settings, bot *botconfig.Bot) (agent.ProviderResolver, error) {
	p, named, err := openProviders(s, nil)
	if err != nil {
		return nil, err
	}
	catalog, err := llm.LoadCatalog(configs.Models())
	if err != nil {
		return nil, err
	}
	return dialog.BotResolver(p, named, catalog, s.LLMModel, bot), nil
}

// chatSession is one terminal dialog: it reads stdin, runs the loop, and
// prints either the conversation or the events.
type chatSession struct {
	m     *Main
	json  bool
	in    *bufio.Scanner
	agent *agent.Agent
	state agent.State
	// midLine says assistant text was printed without its line end yet.
	midLine bool
	// failed counts replies that ended in an error.
	failed int
}

func (c *chatSession) run(ctx context.Context, bot *botconfig.Bot) error {
	if !c.json && bot.Greeting != "" {
		fmt.Fprintln(c.m.Stdout, bot.Greeting)
	}
	for {
		line, ok := c.readLine("> ")
		if !ok {
			return c.end()
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		out, _ := c.agent.Send(ctx, &c.state, line)
		for out.StopReason == agent.StopPaused && ctx.Err() == nil {
			if out, ok = c.answerPending(ctx); !ok {
				return c.end()
			}
		}
		if out.StopReason == agent.StopError {
			c.failed++
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// end closes the session at the end of input: exit status 1 when a reply
// failed, so scripts piping messages in notice.
func (c *chatSession) end() error {
	if err := c.in.Err(); err != nil {
		return err
	}
	if c.failed > 0 {
		return exitError{1}
	}
	return nil
}

// readLine prompts on stderr (so stdout stays the conversation or the
// events) and reads one line.
func (c *chatSession) readLine(prompt string) (string, bool) {
	if !c.json {
		fmt.Fprint(c.m.Stderr, prompt)
	}
	if !c.in.Scan() {
		return "", false
	}
	return c.in.Text(), true
}

// answerPending asks the terminal about the first call the run waits for.
func (c *chatSession) answerPending(ctx context.Context) (agent.Outcome, bool) {
	p := c.state.Pending[0]
	if p.Kind == agent.PendingConfirmation {
		line, ok := c.readLine(fmt.Sprintf("Run %s %s? [y/N] ", p.Name, p.Arguments))
		if !ok {
			return agent.Outcome{}, false
		}
		answer := strings.ToLower(strings.TrimSpace(line))
		out, _ := c.agent.Confirm(ctx, &c.state, p.ID, answer == "y" || answer == "yes")
		return out, true
	}
	line, ok := c.readLine(fmt.Sprintf("Client tool %s %s: enter its result as one line of JSON: ", p.Name, p.Arguments))
	if !ok {
		return agent.Outcome{}, false
	}
	res := agent.ClientResult{ID: p.ID, Content: line}
	if !json.Valid([]byte(line)) {
		res.IsError, res.Content = true, "the client returned invalid JSON: "+line
	}
	out, _ := c.agent.SubmitToolResults(ctx, &c.state, []agent.ClientResult{res})
	return out, true
}

// Send prints an event: as a JSON line with --json, else as conversation.
func (c *chatSession) Send(e agent.Event) {
	if c.json {
		b, err := json.Marshal(e)
		if err != nil {
			b = []byte(fmt.Sprintf(`{"type":"error","code":"internal","message":%q,"retryable":false}`, err.Error()))
		}
		fmt.Fprintf(c.m.Stdout, "%s\n", b)
		return
	}
	c.print(e)
}

func (c *chatSession) print(e agent.Event) {
	switch e := e.(type) {
	case agent.TextDelta:
		fmt.Fprint(c.m.Stdout, e.Text)
		c.midLine = true
	case agent.ToolCall:
		c.endLine()
		fmt.Fprintf(c.m.Stderr, "  [%s %s]\n", e.Name, e.Arguments)
	case agent.ToolResult:
		if e.IsError {
			fmt.Fprintf(c.m.Stderr, "  [%s failed: %s]\n", e.Name, firstLine(e.Content))
		}
	case agent.Error:
		c.endLine()
		fmt.Fprintf(c.m.Stderr, "error: %s (%s)\n", e.Message, e.Code)
	case agent.Done:
		c.finish(e)
	}
}

func (c *chatSession) finish(e agent.Done) {
	if !c.midLine && e.Text != "" && e.StopReason != agent.StopPaused {
		// The final text did not stream (a done tool's message).
		fmt.Fprint(c.m.Stdout, e.Text)
		c.midLine = true
	}
	c.endLine()
	if e.StopReason != agent.StopCompleted && e.StopReason != agent.StopPaused && e.StopReason != agent.StopError {
		fmt.Fprintf(c.m.Stderr, "  [stopped: %s]\n", e.StopReason)
	}
}

func (c *chatSession) endLine() {
	if c.midLine {
		fmt.Fprintln(c.m.Stdout)
		c.midLine = false
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
