package botconfig

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/schemaref"
)

// httpTools checks the config's tools and builds their specs.
func (c *checker) httpTools() {
	for i := range c.cfg.Tools {
		c.httpTool(&c.cfg.Tools[i], ptr("/tools", i))
	}
}

func (c *checker) httpTool(t *HTTPTool, at string) {
	if !llm.ValidToolName(t.Name) {
		c.ps.add(ptr(at, "name"), "tool name %q must be 1-64 letters, digits, '_' or '-'", t.Name)
	} else {
		c.claim(t.Name, ptr(at, "name"))
	}
	if strings.TrimSpace(t.Description) == "" {
		c.ps.add(ptr(at, "description"), "description is empty; tell the model what the tool does and when to use it")
	}
	if t.Ephemeral < 0 || t.Ephemeral > 100 {
		c.ps.add(ptr(at, "ephemeral"), "ephemeral must be between 0 (keep all outputs) and 100")
	}
	args, params := checkParameters(&c.ps, ptr(at, "parameters"), t.Parameters)
	spec := ToolSpec{
		Name: t.Name, Description: t.Description, Parameters: params,
		Execution: t.Execution, RequiresConfirmation: t.RequiresConfirmation, Ephemeral: t.Ephemeral,
		ShowToEndUser: t.ShowToEndUser,
	}
	switch t.Execution {
	case "", ExecutionServer:
		spec.Execution = ExecutionServer
		if t.Endpoint == nil {
			c.ps.add(ptr(at, "endpoint"), "a server tool needs an endpoint; add one, or set execution to \"client\" if the caller runs it")
			break
		}
		var ps Problems
		spec.Endpoint, ps = parseEndpoint(t.Endpoint, scope{args: args, vars: c.vars, chatbotID: c.cfg.BasicSettings.ChatbotID}, ptr(at, "endpoint"))
		c.ps = append(c.ps, ps...)
	case ExecutionClient:
		if t.Endpoint != nil {
			c.ps.add(ptr(at, "endpoint"), "a client tool is run by the caller and has no endpoint; remove it, or drop execution \"client\"")
		}
	default:
		c.ps.add(ptr(at, "execution"), "execution must be \"server\" or \"client\"")
	}
	c.tools = append(c.tools, spec)
}

// checkParameters checks that a tool's parameters are an object schema and
// returns its properties (true when required) and the schema to give the model.
func checkParameters(ps *Problems, at string, raw json.RawMessage) (map[string]bool, json.RawMessage) {
	args := map[string]bool{}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return args, llm.EmptyObjectSchema()
	}
	var schema struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		ps.add(at, `parameters must be a JSON Schema object like {"type": "object", "properties": {...}}: %v`, err)
		return args, raw
	}
	if schema.Type != "object" {
		ps.add(ptr(at, "type"), `parameters must have "type": "object" (tool arguments are always an object)`)
	}
	for name, prop := range schema.Properties {
		args[name] = false
		if !bytes.HasPrefix(bytes.TrimSpace(prop), []byte("{")) {
			ps.add(ptr(ptr(at, "properties"), name), "property %q must be a schema object like {\"type\": \"string\"}", name)
		}
	}
	for i, name := range schema.Required {
		if _, ok := args[name]; !ok {
			ps.add(ptr(ptr(at, "required"), i), "%q is required but not in properties; add it to properties or remove it here", name)
			continue
		}
		args[name] = true
	}
	checkNoRemoteRefs(ps, at, raw)
	return args, raw
}

// checkNoRemoteRefs rejects references that point outside the schema: a
// validator resolving them would fetch tenant-chosen URLs.
func checkNoRemoteRefs(ps *Problems, at string, raw json.RawMessage) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	for _, r := range schemaref.RemoteRefs(v) {
		ps.add(at+r.Pointer, "%s must point inside the schema (\"#/...\"); remote schemas are not fetched", r.Key)
	}
}
