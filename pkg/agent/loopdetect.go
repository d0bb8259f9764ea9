package agent

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"

	"github.com/parleyhq/parley/pkg/llm"
)

// LoopMemory remembers the signatures of the run's recent tool-call batches,
// so a model stuck calling the same tools with the same arguments is stopped
// even across a pause.
type LoopMemory struct {
	Recent []string `json:"recent,omitempty"`
}

// observe records a batch and reports whether the run is looping: the same
// batch repeats times in a row, or two batches alternating twice (A B A B).
func (m *LoopMemory) observe(sig string, repeats int) bool {
	m.Recent = append(m.Recent, sig)
	if keep := 2 * repeats; len(m.Recent) > keep {
		m.Recent = append(m.Recent[:0:0], m.Recent[len(m.Recent)-keep:]...)
	}
	n := len(m.Recent)
	if n >= repeats {
		same := true
		for _, s := range m.Recent[n-repeats:] {
			same = same && s == sig
		}
		if same {
			return true
		}
	}
	return n >= 4 && m.Recent[n-2] != sig &&
		m.Recent[n-3] == sig && m.Recent[n-4] == m.Recent[n-2]
}

// callSignature hashes a batch's names and compacted arguments in order.
func callSignature(calls []llm.ToolUse) string {
	h := fnv.New64a()
	var buf bytes.Buffer
	for _, c := range calls {
		h.Write([]byte(c.Name))
		h.Write([]byte{0})
		buf.Reset()
		if json.Compact(&buf, c.Arguments) == nil {
			h.Write(buf.Bytes())
		} else {
			h.Write(c.Arguments)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
