package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/apply"
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

// validateFile checks one file as parley apply does (apply.CheckBotFile),
// with the server's own providers' model lists.
func validateFile(file string, opts botconfig.Options, serverModels map[string][]string) validateResult {
	res := validateResult{File: file, Errors: []botconfig.Problem{}}
	f := apply.CheckBotFile(file, opts, serverModels)
	if f.Bot == nil {
		res.Errors = f.Errors
		return res
	}
	res.Valid, res.Prompt, res.Tools, res.Warnings = true, f.Bot.SystemPrompt, f.Bot.Offered(), f.Warnings
	return res
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
