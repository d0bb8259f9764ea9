package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parleyhq/parley/pkg/tool"
)

// Env is what native tools may use in one dialog.
type Env struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Location is the default time zone for current_time; nil means UTC.
	Location *time.Location
	// Memory backs remember and recall; nil gives the dialog a fresh
	// in-memory store.
	Memory Memory
	// UserMemory backs remember_about_user and forget_about_user
	// (UserMemoryTools): notes about the end user across dialogs.
	UserMemory UserMemory
	// EndDialog, when set, is told that end_dialog was called, with its
	// reason: the application closes the dialog as the run ends.
	EndDialog func(reason string)
	// Knowledge backs search_knowledge (KnowledgeTools).
	Knowledge KnowledgeSearch
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Native is a native tool's definition and a constructor binding it to a
// dialog's Env. The definition is computed once, at registration.
type Native struct {
	Definition tool.Definition
	Bind       func(Env) tool.Tool
}

// define returns a Native whose parameter schema is generated from A, a struct
// whose fields carry json tags (no omitempty means required) and jsonschema
// description tags.
func define[A any](name, description string, call func(ctx context.Context, env Env, args A) (tool.Result, error)) Native {
	schema, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("builtin %s: schema: %v", name, err)) // a programming error in this package
	}
	params, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("builtin %s: schema: %v", name, err))
	}
	def := tool.Definition{Name: name, Description: description, Parameters: params}
	return Native{
		Definition: def,
		Bind: func(env Env) tool.Tool {
			return &native[A]{def: def, env: env, call: call}
		},
	}
}

// native is a Native bound to one dialog.
type native[A any] struct {
	def  tool.Definition
	env  Env
	call func(ctx context.Context, env Env, args A) (tool.Result, error)
}

func (n *native[A]) Definition() tool.Definition { return n.def }

func (n *native[A]) Call(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	var args A
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return tool.Result{}, fmt.Errorf("invalid arguments: %v", err)
		}
	}
	res, err := n.call(ctx, n.env, args)
	res.Meta.Kind = "native"
	return res, err
}
