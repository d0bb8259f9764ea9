package httptool

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
)

// TestAnEchoedSecretIsScrubbedInEveryEncoding runs a server that echoes the
// token it was sent in every encoding a PHP, Python, Go or proxy server
// might use, and checks the tool result shows none of them.
func TestAnEchoedSecretIsScrubbedInEveryEncoding(t *testing.T) {
	const token = `tök/en+S3CRET=&<x>"`
	srv := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		for _, sp := range redacttest.Spellings(got) {
			fmt.Fprintf(w, "%s: %s\n", sp.Name, sp.Text)
		}
		fmt.Fprintf(w, "basic: Basic %s\n", base64.StdEncoding.EncodeToString([]byte("bot:"+got)))
	})
	tool := `{"name": "echo", "description": "d", "parameters": {"type": "object", "properties": {}},
		"endpoint": {"url": "{base}/echo", "headers": {"Authorization": "Bearer {{secrets.token}}"}}}`
	res := call(t, newTool(t, srv, tool, "", botconfig.Vars{"secrets.token": token}, Options{}), `{}`)
	if got := srv.last(t).Header.Get("Authorization"); got != "Bearer "+token {
		t.Fatalf("the server got %q, so the test proves nothing", got)
	}
	for _, sp := range redacttest.Spellings(token) {
		if strings.Contains(res.Content, sp.Text) {
			t.Errorf("%s: the result shows %q", sp.Name, sp.Text)
		}
		if !strings.Contains(res.Content, sp.Name+": [redacted]\n") {
			t.Errorf("%s: not redacted whole", sp.Name)
		}
	}
	if strings.Contains(res.Content, base64.StdEncoding.EncodeToString([]byte("bot:" + token))[4:12]) {
		t.Errorf("the Basic credential shows the secret: %s", res.Content)
	}
}
