package platform

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// Compile validates and compiles a config under the operator's rules
// (Options.Compile), exactly as saving a version does, and saves nothing.
func (c Configs) Compile(config []byte) (*botconfig.Bot, error) {
	s := c.svc
	return s.opts.Compile(config)
}

// compile runs the compiler and turns its problems into an invalid Error
// whose details point into the config (not into the request around it).
func (c Configs) compile(ctx context.Context, config []byte) (*botconfig.Bot, error) {
	s := c.svc
	if len(config) == 0 {
		return nil, Invalid(Detail{Pointer: "", Message: "a config is required"})
	}
	bot, err := s.opts.Compile(config)
	var ps botconfig.Problems
	switch {
	case errors.As(err, &ps):
		e := &Error{Code: CodeInvalid, Message: "the config is invalid", cause: err}
		for _, p := range ps {
			e.Details = append(e.Details, Detail{Pointer: p.Pointer, Message: p.Message})
		}
		return nil, e
	case err != nil:
		return nil, s.internal(ctx, "compile config", err)
	}
	return bot, nil
}

// CompileStored compiles a config that was stored valid, with the same
// compiler (Options.Compile) that accepted it. An error means the stored
// config or the compiler changed: an internal fault, not the caller's.
func (c Configs) CompileStored(config []byte) (*botconfig.Bot, error) {
	s := c.svc
	return s.opts.Compile(config)
}

// Validation is what checking a config found: every problem that would
// refuse it (Errors, pointers into the config), or the compiled Bot, and
// Warnings that would not refuse it.
type Validation struct {
	Bot      *botconfig.Bot
	Errors   []Detail
	Warnings []Detail
}

// Validate checks a config as saving a version would, and saves
// nothing. With a tenant (any member who may read its versions), the
// providers the config names are checked against the server's and the
// tenant's, and its models against their lists; without one, only
// against the default provider's list (Options.ServerModels[""]), since
// another tenant's provider may take a server provider's name.
func (c Configs) Validate(ctx context.Context, p *Principal, tenant string, config []byte) (Validation, error) {
	s := c.svc
	tenantID := ""
	if tenant != "" {
		t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjVersions, auth.ActRead)
		if err != nil {
			return Validation{}, err
		}
		tenantID = t.ID
	}
	bot, err := s.Configs().compile(ctx, config)
	if err != nil {
		return invalidConfig(err)
	}
	if tenantID == "" {
		defaults := map[string][]string{"": s.opts.ServerModels[""]}
		return Validation{Bot: bot, Warnings: modelWarnings(bot, defaults)}, nil
	}
	warnings, err := s.Providers().checkProviders(ctx, tenantID, bot)
	if err != nil {
		return invalidConfig(err)
	}
	if err := s.Knowledge().checkKnowledge(ctx, tenantID, bot); err != nil {
		return invalidConfig(err)
	}
	return Validation{Bot: bot, Warnings: warnings}, nil
}

// invalidConfig turns an invalid Error into a Validation's Errors; other
// errors stay errors.
func invalidConfig(err error) (Validation, error) {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeInvalid {
		return Validation{Errors: e.Details}, nil
	}
	return Validation{}, err
}
