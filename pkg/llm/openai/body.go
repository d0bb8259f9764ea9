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
// Once marshalAgain is called, the next attempt takes the bytes with it and
// any later one marshals them anew, so none are held while the model
// thinks.
type heldBody struct {
	mu    sync.Mutex
	b     []byte
	again func() ([]byte, error)
}

// reader opens the body for one attempt. It is called only inside Do.
func (h *heldBody) reader() (io.Reader, error) {
	h.mu.Lock()
	b, again := h.b, h.again
	if again != nil {
		h.b = nil
	}
	h.mu.Unlock()
	if b == nil && again != nil {
		var err error
		if b, err = again(); err != nil {
			return nil, fmt.Errorf("marshalling the request again: %w", err)
		}
	}
	return &bodyReader{r: bytes.NewReader(b)}, nil
}

// marshalAgain hands the bytes to the next attempt only; later ones get
// marshal's. Call it after retryablehttp has measured the body, which
// opens a reader of its own.
func (h *heldBody) marshalAgain(marshal func() ([]byte, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.again = marshal
}

// release drops the bytes once no attempt can follow.
func (h *heldBody) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.b, h.again = nil, nil
}

// bodyReader is one attempt's body. It drops its view of the bytes once
// they are read, or when closed: over HTTP/2 the transport closes a body
// only when the response arrives, which for a model may be minutes after
// it was sent. The transport may close a body from another goroutine than
// the one reading it, hence the lock.
type bodyReader struct {
	mu sync.Mutex
	r  *bytes.Reader
}

func (b *bodyReader) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.r.Read(p)
	if b.r.Len() == 0 {
		b.r.Reset(nil)
	}
	return n, err
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
