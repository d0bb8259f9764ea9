package mcptool

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DialInMemory makes p reach every server through an in-memory transport to
// a fresh session of the server newServer returns, instead of the network.
func DialInMemory(p *Pool, newServer func() *mcp.Server) {
	p.dial = func(ctx context.Context, _ *target) (mcp.Transport, error) {
		client, server := mcp.NewInMemoryTransports()
		if _, err := newServer().Connect(ctx, server, nil); err != nil {
			return nil, err
		}
		return client, nil
	}
}

// CloseIdle runs the idle reaper as if the clock read now.
func CloseIdle(p *Pool, now time.Time) { p.closeIdle(now) }

// ExposedName is exposedName, for the naming tests.
var ExposedName = exposedName

// NormalizeSchema is normalizeSchema, for the schema tests.
var NormalizeSchema = normalizeSchema
