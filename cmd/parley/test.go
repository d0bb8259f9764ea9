package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/apply"
	"github.com/parleyhq/parley/pkg/bottest"
)

// test runs conversation tests: `parley test [--live] [--junit FILE] PATH...`.
// A PATH is a directory laid out like tenants/ (or one tenant's directory),
// or one test file <tenant>/tests/<bot>.json; the bot's config is
// <tenant>/bots/<bot>.json.
func (m *Main) test(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("parley test", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	live := fs.Bool("live", false, "answer with the real model from the PARLEY_LLM_* settings instead of the test files' scripts")
	junit := fs.String("junit", "", "also write the results as JUnit XML to FILE")
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, `usage: parley test [--live] [--junit FILE] PATH...

Runs the conversation tests of bots (docs/testing.md). PATH is a directory
laid out like tenants/ (each <tenant>/tests/<bot>.json tests the bot
<tenant>/bots/<bot>.json), one tenant's directory, or one test file.
Tools never reach the network: they answer with the files' fixtures.
Exit status 0 when every test passed, 1 when one failed, 2 on a usage error.`)
		fs.PrintDefaults()
	}
	paths, helped, err := parseArgs(fs, args, -1)
	if helped || err != nil {
		return err
	}
	if len(paths) == 0 {
		fs.Usage()
		return errUsage
	}
	files, err := testFiles(paths)
	if err != nil {
		fmt.Fprintf(m.Stderr, "parley test: %v\n", err)
		return errUsage
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	var all []bottest.FileResults
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		all = append(all, m.testFile(ctx, f, *live, settings))
	}
	_, failed := bottest.WriteText(m.Stdout, all)
	if *junit != "" {
		if err := writeJUnitFile(*junit, all); err != nil {
			return err
		}
	}
	if failed > 0 {
		return exitError{1}
	}
	return nil
}

// testFile runs one test file against its bot's config.
func (m *Main) testFile(ctx context.Context, path string, live bool, s Settings) bottest.FileResults {
	fr := bottest.FileResults{Name: path}
	data, err := os.ReadFile(path)
	if err != nil {
		fr.Err = err
		return fr
	}
	suite, err := bottest.Parse(data)
	if err != nil {
		fr.Err = fmt.Errorf("not a valid test file:\n%w", err)
		return fr
	}
	bot, err := loadBot(botConfigFor(path), configOptions(s))
	if err != nil {
		fr.Err = err
		return fr
	}
	opts := bottest.Options{}
	if live {
		var r agent.ProviderResolver
		if r, err = chatResolver(s, bot); err != nil {
			fr.Err = err
			return fr
		}
		opts.Live = r
	}
	fr.Results = bottest.Run(ctx, bot, suite, opts)
	return fr
}

// botConfigFor maps <tenant>/tests/<bot>.json to <tenant>/bots/<bot>.json.
func botConfigFor(testFile string) string {
	tenantDir := filepath.Dir(filepath.Dir(testFile))
	return filepath.Join(tenantDir, "bots", filepath.Base(testFile))
}

// testFiles expands the paths into test files, sorted per path.
func testFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			if filepath.Base(filepath.Dir(p)) != "tests" || !strings.HasSuffix(p, ".json") {
				return nil, fmt.Errorf("%s: a test file lives at <tenant>/tests/<bot>.json", p)
			}
			files = append(files, p)
			continue
		}
		dirs, err := apply.TenantDirs(p)
		if err != nil {
			return nil, err
		}
		found := 0
		for _, d := range dirs {
			fs, _ := filepath.Glob(filepath.Join(d, "tests", "*.json"))
			sort.Strings(fs)
			files = append(files, fs...)
			found += len(fs)
		}
		if found == 0 {
			return nil, fmt.Errorf("%s holds no test files (<tenant>/tests/<bot>.json)", p)
		}
	}
	return files, nil
}

func writeJUnitFile(path string, all []bottest.FileResults) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bottest.WriteJUnit(f, all); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
