package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/tool"
)

// The operations a server's resources and prompts are offered as, each a
// tool named <server>__<operation> (mcp_servers[].resources and .prompts).
const (
	OpListResources = "list_resources"
	OpReadResource  = "read_resource"
	OpGetPrompt     = "get_prompt"
)

// catalogOps are the operations the config asks of server, in order.
func catalogOps(resources, prompts bool) []string {
	var ops []string
	if resources {
		ops = append(ops, OpListResources, OpReadResource)
	}
	if prompts {
		ops = append(ops, OpGetPrompt)
	}
	return ops
}

// shownInDescription is how many resources or prompts a tool's description
// names; list_resources has the rest.
const shownInDescription = 20

// catalogTools are the tools that expose cat, for the operations names
// gives a name (those the config asks for) and the server offers.
func catalogTools(pool *Pool, t *target, cat *catalog, names map[string]string) []tool.Tool {
	var out []tool.Tool
	add := func(op, description string, params json.RawMessage, request catalogRequest) {
		out = append(out, tool.KeepingLast(&catalogTool{pool: pool, target: t, op: op, request: request,
			def: tool.Definition{Name: names[op], Description: capDescription(description), Parameters: params}}, t.server.Ephemeral))
	}
	if names[OpReadResource] != "" && cat.offersResources {
		add(OpListResources, fmt.Sprintf("List the resources (documents, data) MCP server %q offers, with their URIs, and the URI templates it can fill; read one with %s.", t.server.Name, names[OpReadResource]),
			json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			func(context.Context, *mcp.ClientSession, json.RawMessage) (string, error) {
				return renderCatalog(cat), nil
			})
		add(OpReadResource, readDescription(t.server.Name, cat, names[OpListResources]),
			json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI, as listed"}},"required":["uri"],"additionalProperties":false}`),
			readResource)
	}
	if names[OpGetPrompt] != "" && cat.offersPrompts && len(cat.prompts) > 0 {
		add(OpGetPrompt, promptDescription(t.server.Name, cat), promptSchema(cat), getPrompt)
	}
	return out
}

// catalogRequest asks the session for one operation and renders the answer.
type catalogRequest func(ctx context.Context, s *mcp.ClientSession, args json.RawMessage) (string, error)

// catalogTool is one operation on a server's resources or prompts.
type catalogTool struct {
	pool    *Pool
	target  *target
	op      string
	def     tool.Definition
	request catalogRequest
}

func (t *catalogTool) Definition() tool.Definition { return t.def }

// Call runs the operation within the server's timeout; failures the model
// can act on are is_error results, as for the server's tools.
func (t *catalogTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	start := time.Now()
	return t.pool.finish(t.target, t.call(ctx, args), start), nil
}

func (t *catalogTool) call(ctx context.Context, args json.RawMessage) tool.Result {
	c, err := t.pool.acquire(t.target)
	if err != nil {
		return tool.Errorf(t.pool.describeError(t.target, t.op, ctx, ctx, err))
	}
	defer t.pool.release(c)
	callCtx, cancel := context.WithTimeout(ctx, t.target.timeout)
	defer cancel()
	var content string
	err = c.do(callCtx, func(s *mcp.ClientSession) (err error) {
		content, err = t.request(callCtx, s, args)
		return err
	})
	if err != nil {
		return tool.Errorf(t.pool.describeError(t.target, t.op, ctx, callCtx, err))
	}
	return tool.Result{Content: content}
}

func readResource(ctx context.Context, s *mcp.ClientSession, raw json.RawMessage) (string, error) {
	var args struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", err
	}
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: args.URI})
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(res.Contents))
	for _, c := range res.Contents {
		parts = append(parts, renderEmbedded(c))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("The resource <%s> is empty.", args.URI), nil
	}
	return strings.Join(parts, "\n"), nil
}

func getPrompt(ctx context.Context, s *mcp.ClientSession, raw json.RawMessage) (string, error) {
	var args struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", err
	}
	res, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: args.Name, Arguments: args.Arguments})
	if err != nil {
		return "", err
	}
	lines := []string{fmt.Sprintf("Prompt %q", args.Name)}
	if res.Description != "" {
		lines[0] += ": " + res.Description
	}
	for _, m := range res.Messages {
		if m != nil && m.Content != nil {
			lines = append(lines, string(m.Role)+": "+renderContent(m.Content))
		}
	}
	return strings.Join(lines, "\n"), nil
}

// renderCatalog is list_resources' answer: one line per resource, then the
// templates.
func renderCatalog(cat *catalog) string {
	if len(cat.resources) == 0 && len(cat.templates) == 0 {
		return "The server lists no resources."
	}
	var b strings.Builder
	for _, r := range cat.resources {
		b.WriteString(resourceLine(r) + "\n")
	}
	if len(cat.templates) > 0 {
		b.WriteString("URI templates (fill the {variables}, then read the URI):\n")
		for _, rt := range cat.templates {
			fmt.Fprintf(&b, "- %s: %s", rt.URITemplate, cmpLabel(rt.Title, rt.Name))
			if rt.Description != "" {
				b.WriteString(" (" + rt.Description + ")")
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func resourceLine(r *mcp.Resource) string {
	s := fmt.Sprintf("- %s: %s", r.URI, cmpLabel(r.Title, r.Name))
	if r.MIMEType != "" {
		s += ", " + r.MIMEType
	}
	if r.Description != "" {
		s += " (" + r.Description + ")"
	}
	return s
}

func cmpLabel(title, name string) string {
	if title != "" {
		return title
	}
	return name
}

func readDescription(server string, cat *catalog, list string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Read a resource of MCP server %q by its URI.", server)
	if len(cat.resources) > 0 {
		b.WriteString(" Resources:")
		for i, r := range cat.resources {
			if i == shownInDescription {
				fmt.Fprintf(&b, "\n(%d more: call %s)", len(cat.resources)-i, list)
				break
			}
			b.WriteString("\n" + resourceLine(r))
		}
	}
	if len(cat.templates) > 0 {
		fmt.Fprintf(&b, "\nIt also fills URI templates; %s lists them.", list)
	}
	return b.String()
}

func promptDescription(server string, cat *catalog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Get a prompt (a ready-made instruction) of MCP server %q, filled with its arguments. Prompts:", server)
	for i, p := range cat.prompts {
		if i == shownInDescription {
			fmt.Fprintf(&b, "\n(%d more)", len(cat.prompts)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s", p.Name)
		if p.Description != "" {
			b.WriteString(": " + p.Description)
		}
		var args []string
		for _, a := range p.Arguments {
			arg := a.Name
			if a.Required {
				arg += " (required)"
			}
			args = append(args, arg)
		}
		if len(args) > 0 {
			b.WriteString(" Arguments: " + strings.Join(args, ", ") + ".")
		}
	}
	return b.String()
}

// promptSchema names the prompts; their arguments are strings, as MCP has
// them.
func promptSchema(cat *catalog) json.RawMessage {
	names := make([]string, len(cat.prompts))
	for i, p := range cat.prompts {
		names[i] = p.Name
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":      map[string]any{"type": "string", "enum": names, "description": "the prompt to get"},
			"arguments": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": "the prompt's arguments by name"},
		},
		"required":             []string{"name"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(schema) // a map of plain values always marshals
	return b
}
