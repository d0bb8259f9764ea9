package main

import (
	"context"
	"errors"
)

func (m *Main) apply(ctx context.Context, args []string) error {
	return errors.New("not implemented yet")
}
