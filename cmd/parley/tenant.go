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
	pos, helped, err := parseArgs(fs, args[1:], 1)
	if helped || err != nil {
		return err
	}
	slug := pos[0]
	if *name == "" {
		*name = slug
	}
	d, err := m.openData(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close()
	t, key, err := d.platform.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: slug, Name: *name})
	if err != nil {
		return describePlatformError(err)
	}
	fmt.Fprintf(m.Stdout, "Created tenant %s (%s) in the %s database at %s.\n", t.Slug, t.ID, d.store.Dialect(), d.store.Location())
	fmt.Fprintf(m.Stdout, "Admin API key (shown this once; store it now):\n%s\n", key.Key)
	return nil
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, as in `tenant create acme --name Acme` (the flag
// package alone stops at the first positional one), and expects exactly
// want positional ones. helped reports that --help printed the usage;
// mistakes print it too and return errUsage.
func parseArgs(fs *flag.FlagSet, args []string, want int) (pos []string, helped bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, true, nil
			}
			return nil, false, errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if want >= 0 && len(pos) != want {
		fs.Usage()
		return nil, false, errUsage
	}
	return pos, false, nil
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
