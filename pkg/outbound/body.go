package outbound

import (
	"fmt"
	"io"
)

// ReadBody reads at most limit bytes of r and says whether more followed,
// so a huge or endless response costs at most limit bytes of memory and the
// caller can mark the cut. limit <= 0 means DefaultMaxBodyBytes.
func ReadBody(r io.Reader, limit int64) (body []byte, truncated bool, err error) {
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(body)) > limit {
		return body[:limit], true, nil
	}
	if err != nil {
		return body, false, fmt.Errorf("reading response body: %w", err)
	}
	return body, false, nil
}
