package api

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"
)

// headerRequestID carries a request's id in and out, so a client's or a
// proxy's id joins our logs.
const headerRequestID = "X-Request-ID"

// ctxRequestID is the gin context key of the request id.
const ctxRequestID = "parley.request_id"

// requestID adopts a well-formed incoming X-Request-ID or makes one, and
// echoes it on the response. Malformed ids are replaced, not trusted, since
// they end up in logs.
func requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(headerRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Set(ctxRequestID, id)
		c.Header(headerRequestID, id)
		c.Next()
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':'
		if !ok {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:]) // never returns an error: it crashes the program instead
	return hex.EncodeToString(b[:])
}

// observe logs and measures every request once it is done. It logs only
// metadata: never headers (Authorization, cookies) and never bodies.
func observe(log *slog.Logger, m *httpMetrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		elapsed := time.Since(start)
		m.observe(c, elapsed)
		logRequest(log, c, elapsed)
	}
}

// logRequest writes a finished request's line: its ids, route, status and
// duration, and the tenant and dialog it concerned.
func logRequest(log *slog.Logger, c *gin.Context, elapsed time.Duration) {
	attrs := []slog.Attr{
		slog.String("request_id", c.GetString(ctxRequestID)),
		slog.String("method", c.Request.Method),
		slog.String("route", routeLabel(c)),
		slog.Int("status", c.Writer.Status()),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
	}
	if p, ok := principalOf(c); ok && p.TenantID != "" {
		attrs = append(attrs, slog.String("tenant_id", p.TenantID))
	}
	if t := c.Param("tenant"); t != "" {
		attrs = append(attrs, slog.String("tenant", t)) // as the path named it: slug or id
	}
	// The dialog the path names, or the one the OpenAI face answered in.
	if d := cmp.Or(c.Param("dialog"), c.Writer.Header().Get(headerDialog)); d != "" {
		attrs = append(attrs, slog.String("dialog_id", d))
	}
	level := slog.LevelInfo
	if c.Writer.Status() >= 500 {
		level = slog.LevelError
	}
	log.LogAttrs(c.Request.Context(), level, "http request", attrs...)
}

// recoverPanics turns a handler panic into a logged 500 so one bad request
// cannot take the server down or leak a stack trace to the client.
func recoverPanics(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // the client went away; let net/http handle it quietly
				}
				log.Error("handler panic", "request_id", c.GetString(ctxRequestID), "route", routeLabel(c), "panic", fmt.Sprint(v))
				writeError(c, errInternal)
			}
		}()
		c.Next()
	}
}

// limitBody caps request bodies; decodeJSON turns the overflow into a 413.
// The routes in own cap their bodies themselves (a message with images is
// larger than any config).
func limitBody(max int64, own ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Body != nil && !slices.Contains(own, c.FullPath()) {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, max)
		}
		c.Next()
	}
}
