package store

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// StringList is a list of strings kept as one JSON text column: scopes and
// allowed origins are short, always read together and never queried by
// element, so a join table would only add writes.
type StringList []string

// Value encodes the list as JSON ("[]" for an empty list).
func (l StringList) Value() (driver.Value, error) {
	if l == nil {
		l = StringList{}
	}
	b, err := json.Marshal([]string(l))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Scan decodes a JSON text column.
func (l *StringList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*l = nil
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("store: cannot scan %T into StringList", src)
	}
	return json.Unmarshal(b, (*[]string)(l))
}
