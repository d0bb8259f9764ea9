package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// HeaderCSRF marks a request as sent by a script rather than a cross-site
// form: the server requires it (or a same-origin Origin header) on unsafe
// requests authenticated by the session cookie. Browsers cannot add custom
// headers cross-site without a CORS preflight the server never grants.
const HeaderCSRF = "X-Parley-CSRF"

// Client calls one Parley server with one credential.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client for the server at baseURL (like
// "http://127.0.0.1:8080") sending token as its bearer credential: an sk_ or
// pk_ key or the platform token. An empty token sends none, which suits
// /v1/auth/login with a cookie-jar HTTP client.
func New(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: http.DefaultClient}
}

// WithHTTPClient returns a copy of c that sends requests through hc, for
// example one with a cookie jar for session logins.
func (c *Client) WithHTTPClient(hc *http.Client) *Client {
	cp := *c
	cp.http = hc
	return &cp
}

// WithToken returns a copy of c that authenticates with token instead.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// Do sends one request with body encoded as JSON (nil sends none) and decodes
// a 2xx JSON answer into out (nil ignores it). Any other status is an *Error.
// The typed methods below are thin wrappers around it; tests use it to reach
// raw routes.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("apiclient: encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(HeaderCSRF, "1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("apiclient: decode %s %s: %w", method, path, err)
	}
	return nil
}

// decodeError reads an error body; a body that is not the API's error shape
// (a proxy's page, say) still yields an *Error with the status.
func decodeError(resp *http.Response) error {
	var body ErrorBody
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code == "" {
		return &Error{Status: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode), Message: http.StatusText(resp.StatusCode)}
	}
	body.Error.Status = resp.StatusCode
	return &body.Error
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }

// tenantPath is /v1/tenants/{tenant} followed by more segments.
func tenantPath(tenant string, rest ...string) string {
	p := "/v1/tenants/" + seg(tenant)
	for _, r := range rest {
		p += "/" + seg(r)
	}
	return p
}

// withCursor adds ?cursor= when there is one.
func withCursor(path, cursor string) string {
	if cursor == "" {
		return path
	}
	return path + "?cursor=" + url.QueryEscape(cursor)
}
