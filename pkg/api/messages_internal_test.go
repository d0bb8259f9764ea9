package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// A turn's request lives as long as its event stream; once decoded, its
// body must not stay reachable from it.
func TestADecodedTurnBodyIsNotKeptByTheRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{"a valid message", `{"text":"hello"}`, false},
		{"a body that fails to decode", `{"text":`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := gin.CreateTestContext(httptest.NewRecorder())
			c.Request = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			var req apiclient.SendMessageRequest
			err := decodeBytes(c, []byte(tt.body), &req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeBytes: %v; want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && req.Text != "hello" {
				t.Fatalf("text = %q; want hello", req.Text)
			}
			if c.Request.Body != http.NoBody {
				t.Fatalf("the request still holds a body (%T)", c.Request.Body)
			}
		})
	}
}
