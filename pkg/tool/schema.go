package tool

import (
	"encoding/json"
	"fmt"
)

// checkSelfContained refuses a schema that refers outside itself (see
// RemoteRefs). Local refs ("#/...") are fine.
func checkSelfContained(params json.RawMessage) error {
	var doc any
	if err := json.Unmarshal(params, &doc); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if refs := RemoteRefs(doc); len(refs) > 0 {
		return refs[0]
	}
	return nil
}
