package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// takeBody reads go-openai's marshalled body into a slice of its exact
// length and detaches it from req, so that copy is garbage from here on.
func takeBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	var body []byte
	var err error
	if n := req.ContentLength; n > 0 {
		body = make([]byte, n)
		_, err = io.ReadFull(req.Body, body)
	} else {
		body, err = io.ReadAll(req.Body)
	}
	req.Body, req.GetBody = nil, nil
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return body, nil
}

// mergeBody sets the patch's fields on the JSON object body.
func mergeBody(raw []byte, patch map[string]any) ([]byte, error) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("request body is not a JSON object: %w", err)
	}
	for k, v := range patch {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
		body[k] = b
	}
	return json.Marshal(body)
}

// heldBody is the request body while attempts may still need it. The
// transport keeps the request, and with it the body it was given, until
// the response body is read to its end; heldBody's readers let go of the
// bytes when the transport closes them, and release lets go of the rest.
type heldBody struct{ b []byte }

// reader opens the body for one attempt. It is called only inside Do.
func (h *heldBody) reader() (io.Reader, error) {
	return &bodyReader{r: bytes.NewReader(h.b)}, nil
}

// release drops the bytes once no attempt can follow.
func (h *heldBody) release() { h.b = nil }

// bodyReader is one attempt's body; Close drops its view of the bytes.
// The transport may close a body from another goroutine than the one
// reading it, hence the lock.
type bodyReader struct {
	mu sync.Mutex
	r  *bytes.Reader
}

func (b *bodyReader) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r.Read(p)
}

// Len lets retryablehttp set the Content-Length.
func (b *bodyReader) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r.Len()
}

func (b *bodyReader) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.r.Reset(nil)
	return nil
}
