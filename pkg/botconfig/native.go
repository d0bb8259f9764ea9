package botconfig

import (
	"bytes"
	"encoding/json"
	"errors"
)

// NativeTool enables one native tool. In JSON it is the tool's name, or an
// object with options: "current_time" or {"name": "recall", "ephemeral": 2}.
type NativeTool struct {
	Name string `json:"name"`
	// Ephemeral keeps only the most recent outputs of the tool in the
	// model's context; 0 keeps all.
	Ephemeral int `json:"ephemeral,omitempty"`
}

// UnmarshalJSON accepts a name or an object, refusing unknown fields.
func (n *NativeTool) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*n = NativeTool{}
		return json.Unmarshal(b, &n.Name)
	}
	type plain NativeTool
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return err
	}
	if p.Name == "" {
		return errors.New(`a native tool object needs a "name"`)
	}
	*n = NativeTool(p)
	return nil
}

// MarshalJSON writes a bare name when there are no options, so configs
// written that way keep their fingerprint.
func (n NativeTool) MarshalJSON() ([]byte, error) {
	if n.Ephemeral == 0 {
		return json.Marshal(n.Name)
	}
	type plain NativeTool
	return json.Marshal(plain(n))
}

// nativeNames lists the enabled native tools' names, in config order.
func nativeNames(tools []NativeTool) []string {
	if len(tools) == 0 {
		return nil
	}
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}
