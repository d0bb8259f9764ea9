package api_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestTheAgentConfigSchemaIsServedForEditors: the admin UI's completion
// reads the schema the server validates with, without a credential.
func TestTheAgentConfigSchemaIsServedForEditors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	resp, err := http.Get(e.srv.URL + "/v1/schemas/agent-config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/schema+json" || !bytes.Equal(body, configs.AgentConfigSchema) {
		t.Errorf("GET /v1/schemas/agent-config = %d %s, %d bytes; want the embedded schema", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
}
