package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/tool"
)

// Memory is a dialog's key-value notes, written by remember and read by
// recall. The platform persists it with the dialog; NewMemory keeps it in
// process.
type Memory interface {
	Set(ctx context.Context, key, value string) error
	Get(ctx context.Context, key string) (string, bool, error)
	All(ctx context.Context) (map[string]string, error)
}

// Limits of one dialog's memory, so a model cannot grow it without bound.
const (
	MaxMemoryKeys       = 100
	MaxMemoryKeyBytes   = 64
	MaxMemoryValueBytes = 2048
)

// ErrMemoryFull is returned by Set when the dialog already holds
// MaxMemoryKeys notes and the key is new.
var ErrMemoryFull = fmt.Errorf("memory is full (%d notes); overwrite an existing key instead", MaxMemoryKeys)

// MapMemory is an in-process Memory; the zero value is not usable, call
// NewMemory. Snapshot and Restore let the platform persist it.
type MapMemory struct {
	mu    sync.Mutex
	notes map[string]string
}

// NewMemory returns an empty in-process memory.
func NewMemory() *MapMemory { return &MapMemory{notes: map[string]string{}} }

// Set stores value under key.
func (m *MapMemory) Set(_ context.Context, key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, exists := m.notes[key]; !exists && len(m.notes) >= MaxMemoryKeys {
		return ErrMemoryFull
	}
	m.notes[key] = value
	return nil
}

// Get returns the value under key.
func (m *MapMemory) Get(_ context.Context, key string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.notes[key]
	return v, ok, nil
}

// All returns a copy of every note.
func (m *MapMemory) All(_ context.Context) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.notes))
	for k, v := range m.notes {
		out[k] = v
	}
	return out, nil
}

type rememberArgs struct {
	Key   string `json:"key" jsonschema:"short name for the note, such as order_number or preferred_contact"`
	Value string `json:"value" jsonschema:"what to remember"`
}

func remember() Native {
	return define("remember",
		"Save a short note for later in this conversation, such as an order number or a preference the customer told you. Saving the same key again replaces the note.",
		func(ctx context.Context, env Env, args rememberArgs) (tool.Result, error) {
			switch {
			case args.Key == "" || len(args.Key) > MaxMemoryKeyBytes:
				return tool.Errorf(fmt.Sprintf("key must be 1 to %d bytes", MaxMemoryKeyBytes)), nil
			case len(args.Value) > MaxMemoryValueBytes:
				return tool.Errorf(fmt.Sprintf("value is %d bytes; keep notes under %d bytes", len(args.Value), MaxMemoryValueBytes)), nil
			case !utf8.ValidString(args.Key) || !utf8.ValidString(args.Value):
				return tool.Errorf("key and value must be valid UTF-8 text"), nil
			}
			if err := env.Memory.Set(ctx, args.Key, args.Value); err != nil {
				return tool.Errorf(err.Error()), nil
			}
			return tool.Result{Content: fmt.Sprintf("Saved note %q.", args.Key)}, nil
		})
}

type recallArgs struct {
	Key string `json:"key,omitempty" jsonschema:"the note to read; omit it to list every note"`
}

func recall() Native {
	return define("recall",
		"Read notes saved earlier in this conversation with remember: one by key, or all of them.",
		func(ctx context.Context, env Env, args recallArgs) (tool.Result, error) {
			if args.Key != "" {
				v, ok, err := env.Memory.Get(ctx, args.Key)
				if err != nil {
					return tool.Result{}, err
				}
				if !ok {
					return tool.Result{Content: fmt.Sprintf("No note named %q.", args.Key)}, nil
				}
				return tool.Result{Content: v}, nil
			}
			all, err := env.Memory.All(ctx)
			if err != nil {
				return tool.Result{}, err
			}
			if len(all) == 0 {
				return tool.Result{Content: "No notes yet."}, nil
			}
			keys := make([]string, 0, len(all))
			for k := range all {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			ordered := make([]map[string]string, len(keys))
			for i, k := range keys {
				ordered[i] = map[string]string{"key": k, "value": all[k]}
			}
			out, err := json.Marshal(ordered)
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Content: string(out)}, nil
		})
}
