package tool

import (
	"encoding/json"
	"fmt"

	"github.com/parleyhq/parley/pkg/schemaref"
)

// checkSelfContained refuses a schema that refers outside itself (see
// schemaref.RemoteRefs). Local refs ("#/...") are fine.
func checkSelfContained(params json.RawMessage) error {
	var doc any
	if err := json.Unmarshal(params, &doc); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if refs := schemaref.RemoteRefs(doc); len(refs) > 0 {
		return refs[0]
	}
	return nil
}
