package builtin

import (
	"fmt"
	"sort"
	"sync"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// Registry holds the native tools a config may enable by name. The operator
// registers more at start-up; it is safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	natives map[string]Native
}

// NewRegistry returns a registry with Parley's standard native tools:
// current_time, handoff_to_human, end_dialog, remember and recall.
func NewRegistry() *Registry {
	r := &Registry{natives: map[string]Native{}}
	for _, n := range []Native{currentTime(), handoffToHuman(), endDialog(), remember(), recall(), cannotAnswer()} {
		r.natives[n.Definition.Name] = n
	}
	return r
}

// Register adds a native tool; its name must be new and fit the model APIs'
// tool-name rule.
func (r *Registry) Register(n Native) error {
	name := n.Definition.Name
	if !llm.ValidToolName(name) {
		return fmt.Errorf("native tool name %q must be 1-64 letters, digits, '_' or '-'", name)
	}
	if n.Bind == nil {
		return fmt.Errorf("native tool %q has no Bind", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.natives[name]; dup {
		return fmt.Errorf("native tool %q is already registered", name)
	}
	r.natives[name] = n
	return nil
}

// Names returns the registered names, sorted, for config validation.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.natives))
	for name := range r.natives {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Build binds the named tools to env, in the order given. remember and recall
// share env.Memory, or one fresh memory when it is nil.
func (r *Registry) Build(names []string, env Env) ([]tool.Tool, error) {
	if env.Memory == nil {
		env.Memory = NewMemory()
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	tools := make([]tool.Tool, 0, len(names))
	for _, name := range names {
		n, ok := r.natives[name]
		if !ok {
			return nil, fmt.Errorf("unknown native tool %q", name)
		}
		tools = append(tools, n.Bind(env))
	}
	return tools, nil
}
