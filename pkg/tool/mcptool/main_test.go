package mcptool_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServerEnv, when set, makes the test binary run newTestServer over
// stdio instead of the tests: the stdio suites start this very binary as
// their MCP server, so they need nothing installed.
const stdioServerEnv = "MCPTOOL_TEST_STDIO_SERVER"

// pidFileEnv, when set, names a file the stdio server writes its PID to.
const pidFileEnv = "MCPTOOL_TEST_PIDFILE"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		if f := os.Getenv(pidFileEnv); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
		}
		if err := newTestServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
