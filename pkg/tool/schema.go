package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// checkSelfContained refuses a schema that refers outside itself. Tool schemas
// come from tenants and from MCP servers; the schema library would fetch a
// remote $ref with its own HTTP client, past pkg/outbound, so a schema could
// make the server reach internal addresses. Local refs ("#/...") are fine.
func checkSelfContained(params json.RawMessage) error {
	var doc any
	if err := json.Unmarshal(params, &doc); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	return walkRefs(doc, "")
}

func walkRefs(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			if s, ok := child.(string); ok {
				switch {
				case key == "$ref" && !strings.HasPrefix(s, "#"):
					return fmt.Errorf("%s/$ref %q points outside the schema; only local references (#/...) are allowed", at, s)
				case (key == "$id" || key == "id") && strings.Contains(s, ":"):
					return fmt.Errorf("%s/%s %q sets a remote base; remove it", at, key, s)
				}
			}
			if err := walkRefs(child, at+"/"+key); err != nil {
				return err
			}
		}
	case []any:
		for i, child := range v {
			if err := walkRefs(child, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
