package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
)

// ToolTrialRequest is the body of POST /v1/tenants/{tenant}/tools/try: a
// draft config, the name of one of its HTTP tools, sample arguments and the
// context variables a dialog would carry.
type ToolTrialRequest struct {
	Config    json.RawMessage   `json:"config"`
	Tool      string            `json:"tool"`
	Arguments json.RawMessage   `json:"arguments,omitempty"`
	Context   map[string]string `json:"context,omitempty"`
}

// ToolTrial is what one try sent and received, secrets redacted, and the
// result the model would have read.
type ToolTrial struct {
	// Request is absent when the request could not be built.
	Request *TrialRequest `json:"request"`
	// Response is absent when no answer came (refused, timed out).
	Response *TrialResponse `json:"response"`
	Result   TrialResult    `json:"result"`
}

// TrialRequest is the HTTP request as sent.
type TrialRequest struct {
	Method  string              `json:"method"`
	URL     string              `json:"url"`
	Headers map[string][]string `json:"headers"`
	Body    string              `json:"body"`
}

// TrialResponse is the HTTP response as received, its body cut at the
// tool's cap.
type TrialResponse struct {
	Status    int                 `json:"status"`
	Headers   map[string][]string `json:"headers"`
	Body      string              `json:"body"`
	Truncated bool                `json:"truncated"`
}

// TrialResult is the tool result the model would read.
type TrialResult struct {
	Content    string `json:"content"`
	IsError    bool   `json:"is_error"`
	DurationMS int64  `json:"duration_ms"`
}

// TryTool sends one call of a draft config's HTTP tool and reports it.
func (c *Client) TryTool(ctx context.Context, tenant string, req ToolTrialRequest) (*ToolTrial, error) {
	var out ToolTrial
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "tools", "try"), req, &out)
}
