package pii

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Redact replaces every match in s with a fixed mask naming its kind,
// "[email]", "[card]": for text nobody needs the values of again (logs).
func (d *Detector) Redact(s string) string {
	matches := d.Find(s)
	if len(matches) == 0 {
		return s
	}
	return replace(s, matches, func(m Match) string { return "[" + m.Kind + "]" })
}

func replace(s string, matches []Match, with func(Match) string) string {
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m.Start])
		b.WriteString(with(m))
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Vault keeps one dialog's placeholders: the same value always gets the
// same placeholder (<EMAIL_1>, <CARD_2>), and a placeholder gives its value
// back. It is safe for concurrent use; the zero value is not, use NewVault.
type Vault struct {
	mu      sync.Mutex
	entries []Entry
	byValue map[string]int // kind + "\x00" + value → index in entries
	byLabel map[string]int // placeholder → index in entries
	perKind map[string]int // how many values of each kind
	changed bool
}

// Entry is one value a Vault holds.
type Entry struct {
	Placeholder string `json:"placeholder"`
	Kind        string `json:"kind"`
	Value       string `json:"value"`
}

// NewVault returns an empty Vault.
func NewVault() *Vault {
	return &Vault{byValue: map[string]int{}, byLabel: map[string]int{}, perKind: map[string]int{}}
}

// LoadVault returns the Vault MarshalJSON wrote; empty data is an empty
// Vault.
func LoadVault(data []byte) (*Vault, error) {
	v := NewVault()
	if len(data) == 0 {
		return v, nil
	}
	var entries []Entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("pii: vault: %w", err)
	}
	for _, e := range entries {
		v.keep(e)
	}
	v.changed = false
	return v, nil
}

// MarshalJSON writes the entries, for LoadVault.
func (v *Vault) MarshalJSON() ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.entries == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(v.entries)
}

// Changed reports whether a placeholder was added since the Vault was
// loaded or the last call to Saved.
func (v *Vault) Changed() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// Saved marks the Vault's entries as stored.
func (v *Vault) Saved() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.changed = false
}

// Len is how many values the Vault holds.
func (v *Vault) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.entries)
}

func (v *Vault) keep(e Entry) {
	v.byValue[e.Kind+"\x00"+e.Value] = len(v.entries)
	v.byLabel[e.Placeholder] = len(v.entries)
	v.perKind[e.Kind]++
	v.entries = append(v.entries, e)
	v.changed = true
}

// Mask replaces the personal data d finds in s with the Vault's
// placeholders, adding one for each value it has not seen.
func (v *Vault) Mask(d *Detector, s string) string {
	matches := d.Find(s)
	if len(matches) == 0 {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return replace(s, matches, func(m Match) string {
		key := m.Kind + "\x00" + m.Value
		if i, ok := v.byValue[key]; ok {
			return v.entries[i].Placeholder
		}
		label := fmt.Sprintf("<%s_%d>", placeholderName(m.Kind), v.perKind[m.Kind]+1)
		v.keep(Entry{Placeholder: label, Kind: m.Kind, Value: m.Value})
		return label
	})
}

// placeholderName is a kind's name in its placeholders: upper case, with
// anything but letters, digits and '_' dropped, so a tenant pattern's
// name cannot make a placeholder that looks like markup.
func placeholderName(kind string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(kind) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' {
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "PII"
	}
	return b.String()
}

var placeholderRe = regexp.MustCompile(`<[A-Z0-9_]+_[0-9]+>`)

// Unmask puts the real values back for the Vault's placeholders in s;
// anything that only looks like a placeholder is left as it is.
func (v *Vault) Unmask(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return placeholderRe.ReplaceAllStringFunc(s, func(p string) string {
		if i, ok := v.byLabel[p]; ok {
			return v.entries[i].Value
		}
		return p
	})
}

// UnmaskJSON puts the real values back in every string of a JSON document
// (a tool call's arguments), keeping it valid JSON whatever the values
// hold. A document that is not JSON is returned unchanged.
func (v *Vault) UnmaskJSON(doc json.RawMessage) json.RawMessage {
	var x any
	if v.Len() == 0 || json.Unmarshal(doc, &x) != nil {
		return doc
	}
	out, err := json.Marshal(v.unmaskAny(x))
	if err != nil {
		return doc
	}
	return out
}

func (v *Vault) unmaskAny(x any) any {
	switch t := x.(type) {
	case string:
		return v.Unmask(t)
	case []any:
		for i := range t {
			t[i] = v.unmaskAny(t[i])
		}
	case map[string]any:
		for k, val := range t {
			t[k] = v.unmaskAny(val)
		}
	}
	return x
}
