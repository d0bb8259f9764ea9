package tool

import (
	"context"
	"encoding/json"
	"time"
)

// Tool is anything the model can call.
type Tool interface {
	// Definition describes the tool to the model. It must not change.
	Definition() Definition
	// Call runs the tool with arguments already validated against the
	// definition's schema. A returned error becomes an is_error result the model
	// reads, so its text must be safe to show: no secrets, no internal addresses.
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Definition is a tool's name, description and JSON Schema for its arguments.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Result is what a tool call returns to the model.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Stop, when set, ends the dialog's loop after this batch of calls with
	// that stop reason ("handoff", "completed").
	Stop string `json:"stop,omitempty"`
	Meta Meta   `json:"meta"`
}

// Meta describes how a call went, for logs, metrics and the admin's dialog view.
type Meta struct {
	Duration time.Duration `json:"duration"`
	// Status is the HTTP status of an HTTP tool's response, 0 otherwise.
	Status int `json:"status,omitempty"`
	// Truncated says the content was cut to the size limit.
	Truncated bool `json:"truncated,omitempty"`
	// Kind is the tool's kind: "http", "mcp", "native" or "client".
	Kind string `json:"kind,omitempty"`
}

// Errorf returns an is_error result with the given text.
func Errorf(content string) Result { return Result{Content: content, IsError: true} }

// ConfirmationRequired is implemented by tools that need a human yes/no before
// each call.
type ConfirmationRequired interface {
	RequiresConfirmation() bool
}

// ClientExecuted is implemented by tools that the caller (the widget or an API
// client) runs: the loop pauses and hands the call over.
type ClientExecuted interface {
	ClientExecuted() bool
}

// Ephemeral is implemented by tools whose outputs are only useful briefly:
// beyond the most recent KeepLast outputs of the tool, the loop replaces them
// with a placeholder before calling the model.
type Ephemeral interface {
	KeepLast() int
}

// KeepingLast returns t marked Ephemeral: the loop keeps only its latest n
// outputs in the model's context. n <= 0 returns t unchanged. The other
// optional behaviours of t still show through.
func KeepingLast(t Tool, n int) Tool {
	if n <= 0 {
		return t
	}
	return keepLast{Tool: t, n: n}
}

type keepLast struct {
	Tool
	n int
}

func (k keepLast) KeepLast() int { return k.n }

func (k keepLast) RequiresConfirmation() bool {
	c, ok := k.Tool.(ConfirmationRequired)
	return ok && c.RequiresConfirmation()
}

func (k keepLast) ClientExecuted() bool {
	c, ok := k.Tool.(ClientExecuted)
	return ok && c.ClientExecuted()
}

// CallIDTaker is implemented by tools that need the id of the call they
// answer (an agent tool links its sub-run to it): the loop then passes
// it in the call's context, for CallID to read.
type CallIDTaker interface {
	TakesCallID() bool
}

type callIDKey struct{}

// WithCallID returns ctx carrying the id of the tool call being answered.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the id WithCallID put in ctx, "" when none.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
