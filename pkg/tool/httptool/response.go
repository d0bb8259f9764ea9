package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
)

// errorExcerptBytes is how much of a non-2xx body the model sees: enough for
// an API's error message, not a whole HTML error page.
const errorExcerptBytes = 1024

// readResponse turns a response into the Result the model reads.
func (t *Tool) readResponse(resp *http.Response, r *botconfig.RenderedRequest) (tool.Result, error) {
	body, truncated, err := outbound.ReadBody(resp.Body, t.opts.MaxBodyBytes)
	if err != nil {
		return tool.Result{}, err
	}
	text := bodyText(body, resp.Header.Get("Content-Type"), truncated)
	res := tool.Result{Meta: tool.Meta{Status: resp.StatusCode, Truncated: truncated}}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if text == "" {
			text = fmt.Sprintf("HTTP %d with an empty body", resp.StatusCode)
		}
		if truncated {
			text += fmt.Sprintf("\n[truncated: the response is longer than %d bytes]", t.opts.MaxBodyBytes)
		}
		res.Content = text
		return res, nil
	}
	res.IsError = true
	res.Content = fmt.Sprintf("HTTP %d %s from %s %s", resp.StatusCode, http.StatusText(resp.StatusCode), r.Method, outbound.StripURL(r.URL))
	if excerpt, cut := cutText(text, errorExcerptBytes); excerpt != "" {
		if cut || truncated {
			excerpt += " [...]"
		}
		res.Content += ": " + excerpt
	}
	return res, nil
}

// bodyText renders a body for the model: compact JSON, text as text, and a
// short note instead of binary data the model cannot use.
func bodyText(body []byte, contentType string, truncated bool) string {
	if len(body) == 0 {
		return ""
	}
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch {
	case isJSON(mediaType, body):
		if !truncated {
			var buf bytes.Buffer
			if json.Compact(&buf, body) == nil {
				return buf.String()
			}
		}
	case !isText(mediaType, body):
		return fmt.Sprintf("[binary response: %s, %d bytes, not shown]", mediaType, len(body))
	}
	if truncated {
		body = trimPartialRune(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

func isJSON(mediaType string, body []byte) bool {
	if mediaType == "application/json" || strings.HasSuffix(mediaType, "+json") {
		return true
	}
	trimmed := bytes.TrimSpace(body)
	return (mediaType == "" || mediaType == "text/plain") && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed)
}

func isText(mediaType string, body []byte) bool {
	switch {
	case mediaType == "":
		return utf8.Valid(trimPartialRune(body))
	case strings.HasPrefix(mediaType, "text/"), strings.HasSuffix(mediaType, "+xml"):
		return true
	}
	switch mediaType {
	case "application/xml", "application/javascript", "application/x-www-form-urlencoded", "application/x-ndjson", "application/yaml":
		return true
	}
	return false
}

// trimPartialRune drops an incomplete UTF-8 sequence the size cap cut.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// cutText returns at most n bytes of s, not splitting a rune.
func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return string(trimPartialRune([]byte(s[:n]))), true
}

// describeFailure words a failed exchange for the model. URLs lose their
// query strings; secrets are scrubbed later by finish.
func (t *Tool) describeFailure(err error, r *botconfig.RenderedRequest, timeout time.Duration) string {
	target := r.Method + " " + outbound.StripURL(r.URL)
	var denied *outbound.DeniedError
	var redirect *outbound.RedirectError
	switch {
	case errors.As(err, &denied):
		return fmt.Sprintf("request to %s refused: %s", target, denied.Error())
	case errors.As(err, &redirect):
		return fmt.Sprintf("request to %s stopped: %s", target, redirect.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("request to %s timed out after %s", target, timeout)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Sprintf("request to %s failed: %v", target, outbound.CleanError(err))
}
