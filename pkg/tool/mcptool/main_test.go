package mcptool_test

import (
	"context"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServerEnv, when set, makes the test binary run newTestServer over
// stdio instead of the tests: the stdio suites start this very binary as
// their MCP server, so they need nothing installed.
const stdioServerEnv = "MCPTOOL_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		if err := newTestServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
