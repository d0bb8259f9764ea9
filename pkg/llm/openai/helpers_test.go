package openai_test

import (
	"errors"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

func asLLMError(err error, target **llm.Error) bool { return errors.As(err, target) }

func withNoStreamUsage(c *openai.Config) { c.DisableStreamUsage = true }
