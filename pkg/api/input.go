package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// Input every route refuses before it reaches the platform. PostgreSQL
// refuses text with a NUL character or bytes that are not UTF-8, and an id
// longer than its column; SQLite stores them. Refusing them here gives
// one clear 4xx on every database, and nothing a client sends becomes a
// 500 and an error in the log.

// maxPathID is the longest tenant, bot, dialog or key reference a path may
// hold: ids and slugs are stored in columns of 64 characters, so a longer
// one names nothing.
const maxPathID = 64

// idParams are the path parameters that name a stored row.
var idParams = []string{"tenant", "bot", "dialog", "id", "channel", "kb", "source"}

// wellFormed refuses a path or query that is not UTF-8 text without NUL
// (400), and an id parameter too long to exist (404).
func wellFormed() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !isText(c.Request.URL.Path) {
			writeError(c, badRequest("", "the path must be UTF-8 text without NUL characters"))
			return
		}
		for name, values := range c.Request.URL.Query() {
			for _, v := range values {
				if !isText(name) || !isText(v) {
					writeError(c, badRequest("", fmt.Sprintf("query parameter %s must be UTF-8 text without NUL characters", strconv.Quote(strings.ToValidUTF8(name, "?")))))
					return
				}
			}
		}
		for _, name := range idParams {
			if len(c.Param(name)) > maxPathID {
				writeError(c, &apiclient.Error{Code: apiclient.CodeNotFound, Message: name + " not found"})
				return
			}
		}
		c.Next()
	}
}

// isText reports whether s is UTF-8 without NUL.
func isText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// checkBody refuses a JSON body that is not UTF-8, or whose strings hold
// a NUL character (\u0000), with the pointer of the first such string.
func checkBody(body []byte) error {
	if !utf8.Valid(body) {
		return badRequest("", fmt.Sprintf("request body is not valid UTF-8 (at byte %d)", invalidAt(body)))
	}
	// JSON spells NUL only as \u0000: a raw one is a syntax error the
	// decoder reports. Only a body with the escape is walked.
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil // the decoder reports it
	}
	if ptr, found := nulAt(v, ""); found {
		return badRequest(ptr, "must not contain the NUL character (\\u0000)")
	}
	return nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// nulAt finds the first string (value or key) in v holding NUL.
func nulAt(v any, ptr string) (string, bool) {
	switch v := v.(type) {
	case string:
		return ptr, strings.IndexByte(v, 0) >= 0
	case []any:
		for i, e := range v {
			if p, ok := nulAt(e, ptr+"/"+strconv.Itoa(i)); ok {
				return p, true
			}
		}
	case map[string]any:
		for k, e := range v {
			p := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(strings.ToValidUTF8(k, ""), "~", "~0"), "/", "~1")
			if strings.IndexByte(k, 0) >= 0 {
				return p, true
			}
			if p, ok := nulAt(e, p); ok {
				return p, true
			}
		}
	}
	return "", false
}

// visibleASCII reports whether s holds only printable ASCII other than
// space, as tokens such as an Idempotency-Key do.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
