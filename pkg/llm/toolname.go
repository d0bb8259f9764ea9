package llm

import "encoding/json"

// MaxToolNameLen is the longest tool name the chat APIs accept.
const MaxToolNameLen = 64

// ValidToolName reports whether name fits the chat APIs' rule for tool
// (function) names, ^[a-zA-Z0-9_-]{1,64}$: a name outside it fails the
// whole request.
func ValidToolName(name string) bool {
	if name == "" || len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return false
		}
	}
	return true
}

func toolNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// EmptyObjectSchema returns the parameters schema of a tool that takes
// none: the APIs want an object schema even then.
func EmptyObjectSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
