package platform

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// CompileConfig validates and compiles a config under the operator's rules
// (Options.Compile), exactly as saving a version does, and saves nothing.
func (s *Service) CompileConfig(config []byte) (*botconfig.Bot, error) {
	return s.opts.Compile(config)
}

// compile runs the compiler and turns its problems into an invalid Error
// whose details point into the config (not into the request around it).
func (s *Service) compile(ctx context.Context, config []byte) (*botconfig.Bot, error) {
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
func (s *Service) CompileStored(config []byte) (*botconfig.Bot, error) {
	return s.opts.Compile(config)
}
