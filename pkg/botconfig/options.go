package botconfig

// DefaultNativeTools are the native tools every Parley build registers. An
// operator who registers more passes the full list in Options.NativeTools.
var DefaultNativeTools = []string{"current_time", "handoff_to_human", "end_dialog", "remember", "recall"}

// Options tune loading, validation and compilation. The zero value uses the
// defaults.
type Options struct {
	// NativeTools are the native tool names a config may enable. Nil means
	// DefaultNativeTools.
	NativeTools []string
}

func (o Options) knownNative(name string) bool {
	list := o.NativeTools
	if list == nil {
		list = DefaultNativeTools
	}
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}
