package botconfig

import "slices"

// defaultNativeTools are the native tools every Parley build registers.
var defaultNativeTools = []string{"current_time", "handoff_to_human", "end_dialog", "remember", "recall", "cannot_answer"}

// DefaultNativeTools returns the native tools every Parley build registers:
// current_time, handoff_to_human, end_dialog, remember, recall and
// cannot_answer. An operator
// who registers more passes the full list in Options.NativeTools.
func DefaultNativeTools() []string { return slices.Clone(defaultNativeTools) }

// Options tune loading, validation and compilation. The zero value uses the
// defaults.
type Options struct {
	// NativeTools are the native tool names a config may enable. Nil means
	// DefaultNativeTools.
	NativeTools []string
	// Stdio is the operator's policy for stdio MCP servers; validation
	// refuses every env key it does not allow, so the zero value allows
	// none.
	Stdio StdioPolicy
	// Providers are the provider names a config's llm section may name;
	// nil accepts any well-formed name (the server checks when it runs).
	Providers []string
}

func (o Options) knownNative(name string) bool {
	list := o.NativeTools
	if list == nil {
		list = defaultNativeTools
	}
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}
