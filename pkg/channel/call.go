package channel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/parleyhq/parley/pkg/outbound"
)

// maxAnswer caps what is read of a platform API's answer.
const maxAnswer = 1 << 20

// APIError is a platform API's refusal: the method, the HTTP status and
// the platform's own description (never a token).
type APIError struct {
	Platform string
	Method   string
	Status   int
	// Description is the platform's reason (Telegram's description,
	// Slack's error code).
	Description string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Platform, e.Method, e.Status, e.Description)
}

// postJSON posts body as JSON to endpoint with the extra header, and
// decodes the answer into out. A transport error names the method only,
// since endpoint may hold a token.
func postJSON(ctx context.Context, client *http.Client, platform, method, endpoint string, header http.Header, body, out any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("%s %s: bad API base URL", platform, method)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = outbound.CleanError(uerr.Err)
		}
		return 0, fmt.Errorf("%s %s: %w", platform, method, err)
	}
	defer resp.Body.Close()
	answer, _, err := outbound.ReadBody(resp.Body, maxAnswer)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: read answer: %w", platform, method, err)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return resp.StatusCode, &APIError{Platform: platform, Method: method, Status: resp.StatusCode, Description: "answer is not JSON"}
	}
	return resp.StatusCode, nil
}
