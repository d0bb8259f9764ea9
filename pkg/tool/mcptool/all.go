package mcptool

import (
	"context"
	"errors"
	"sync"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// All returns the tools of every server, in config order, connecting to them
// in parallel so a bot with several servers starts a dialog in the time of
// the slowest. A server that fails is left out and named in the returned
// error (one per server, joined); the caller decides whether the dialog goes
// on without it. A disabled server (enabled: false) is skipped.
func All(ctx context.Context, pool *Pool, tenantID string, servers []botconfig.MCPServer, vars botconfig.Vars) ([]tool.Tool, error) {
	perServer := make([][]tool.Tool, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, server := range servers {
		if !server.IsEnabled() {
			continue
		}
		wg.Go(func() {
			perServer[i], errs[i] = Tools(ctx, pool, tenantID, server, vars)
		})
	}
	wg.Wait()
	var tools []tool.Tool
	for _, ts := range perServer {
		tools = append(tools, ts...)
	}
	return tools, errors.Join(errs...)
}
