package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
)

// validateResult is one file's outcome in `parley validate --json`.
type validateResult struct {
	File   string              `json:"file"`
	Valid  bool                `json:"valid"`
	Errors []botconfig.Problem `json:"errors"`
	// Warnings do not make the file invalid: models a provider's list
	// does not have (the tenant directory's providers.json, and the
	// server's own providers as the server knows them).
	Warnings []botconfig.Problem     `json:"warnings,omitempty"`
	Prompt   string                  `json:"prompt,omitempty"`
	Tools    []botconfig.OfferedTool `json:"tools,omitempty"`
}

// validate checks agent config files: `parley validate [--print-prompt] [--json] FILE...`.
func (m *Main) validate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("parley validate", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	printPrompt := fs.Bool("print-prompt", false, "print the compiled system prompt of each valid file")
	asJSON := fs.Bool("json", false, "print the results as a JSON array")
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: parley validate [--print-prompt] [--json] FILE...\n\nChecks agent config files; exits 1 when any is invalid.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	// The operator's rules apply as on the server: the stdio env keys
	// tenants may set (PARLEY_MCP_STDIO_ENV), ...
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	catalog, err := llm.LoadCatalog(configs.Models())
	if err != nil {
		return fmt.Errorf("model catalog: %w", err)
	}
	// ... and the server's own providers' model lists, as the server
	// warns of them when a config is saved.
	serverModels := settings.serverModels(catalog)
	results := make([]validateResult, 0, fs.NArg())
	for _, file := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		results = append(results, validateFile(file, configOptions(settings), serverModels))
	}
	if *asJSON {
		err = writeValidateJSON(m.Stdout, results)
	} else {
		err = writeValidateText(m.Stdout, results, *printPrompt)
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		if !r.Valid {
			return exitError{1}
		}
	}
	return nil
}

// validateFile loads and compiles one file. A file that cannot be read is
// reported like a config problem at the document root. Models are checked
// against the lists of serverModels (Settings.serverModels; nil: none)
// and of the providers.json beside the file's bots/ directory, whose
// providers take the place of the server's of the same name.
func validateFile(file string, opts botconfig.Options, serverModels map[string][]string) validateResult {
	res := validateResult{File: file, Errors: []botconfig.Problem{}}
	cfg, err := opts.LoadFile(file)
	var bot *botconfig.Bot
	if err == nil {
		bot, err = opts.Compile(cfg)
	}
	var problems botconfig.Problems
	switch {
	case errors.As(err, &problems):
		res.Errors = problems
	case err != nil:
		res.Errors = []botconfig.Problem{{Pointer: "", Message: strings.TrimPrefix(err.Error(), "botconfig: ")}}
	default:
		res.Valid = true
		res.Prompt = bot.SystemPrompt
		res.Tools = bot.Offered()
		models := maps.Clone(serverModels)
		if models == nil {
			models = map[string][]string{}
		}
		maps.Copy(models, providerModels(filepath.Join(filepath.Dir(filepath.Dir(file)), providersFileName)))
		res.Warnings = bot.UnknownModels(models)
	}
	return res
}

// providerModels reads the model list of each provider in a tenant
// directory's providers.json (which validateFile finds beside the bots/
// directory of the file it checks); nil when there is no such file or it
// does not parse, which parley apply reports on its own.
func providerModels(path string) map[string][]string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var file map[string]struct {
		Models []string `json:"models"`
	}
	if json.Unmarshal(raw, &file) != nil {
		return nil
	}
	out := map[string][]string{}
	for name, p := range file {
		out[name] = p.Models
	}
	return out
}

func writeValidateJSON(w io.Writer, results []validateResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(results)
}

// writeValidateText prints "FILE: POINTER: message" per problem, "FILE: ok"
// per valid file, or the prompts when asked for.
func writeValidateText(w io.Writer, results []validateResult, printPrompt bool) error {
	var b strings.Builder
	for _, r := range results {
		for _, p := range r.Errors {
			fmt.Fprintf(&b, "%s: %s: %s\n", r.File, botconfig.DisplayPointer(p.Pointer), p.Message)
		}
		for _, p := range r.Warnings {
			fmt.Fprintf(&b, "%s: %s: warning: %s\n", r.File, botconfig.DisplayPointer(p.Pointer), p.Message)
		}
		switch {
		case r.Valid && printPrompt && len(results) > 1:
			fmt.Fprintf(&b, "==> %s <==\n%s\n\n", r.File, r.Prompt)
		case r.Valid && printPrompt:
			fmt.Fprintf(&b, "%s\n", r.Prompt)
		case r.Valid:
			fmt.Fprintf(&b, "%s: ok\n", r.File)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
