package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/parleyhq/parley/pkg/platform"
)

// tenant manages tenants: `parley tenant create SLUG [--name NAME]`.
func (m *Main) tenant(ctx context.Context, args []string) error {
	usage := func() {
		fmt.Fprintln(m.Stderr, "usage: parley tenant create SLUG [--name NAME]\n\nCreates a tenant and prints its first admin API key, once.")
	}
	if len(args) == 0 || args[0] != "create" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			usage()
			return nil
		}
		usage()
		return errUsage
	}
	fs := flag.NewFlagSet("parley tenant create", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	name := fs.String("name", "", "display name (default: the slug)")
	fs.Usage = func() {
		usage()
		fmt.Fprintln(m.Stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return errUsage
	}
	slug := pos[0]
	if *name == "" {
		*name = slug
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	log := m.logger(settings)
	st, err := openStore(ctx, settings, log)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, _, err := openPlatform(settings, st, log, false)
	if err != nil {
		return err
	}
	t, key, err := svc.CreateTenant(ctx, platform.Operator(), platform.CreateTenantInput{Slug: slug, Name: *name})
	if err != nil {
		return describePlatformError(err)
	}
	fmt.Fprintf(m.Stdout, "Created tenant %s (%s) in the %s database at %s.\n", t.Slug, t.ID, st.Dialect(), st.Location())
	fmt.Fprintf(m.Stdout, "Admin API key (shown this once; store it now):\n%s\n", key.Key)
	return nil
}

// parseInterleaved parses flags that may come before, between or after
// positional arguments, as in `tenant create acme --name Acme`; the flag
// package alone stops at the first positional one.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// describePlatformError turns a platform error into a message for the
// terminal: the caller-safe message and one line per detail.
func describePlatformError(err error) error {
	var pe *platform.Error
	if !errors.As(err, &pe) || len(pe.Details) == 0 {
		return err
	}
	msg := pe.Message
	for _, d := range pe.Details {
		msg += "\n  " + displayPointer(d.Pointer) + ": " + d.Message
	}
	return errors.New(msg)
}

func displayPointer(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
