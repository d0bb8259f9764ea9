package mcptool_test

import (
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
)

func TestAllowAndDenyListsChooseTheTools(t *testing.T) {
	all := []string{"shop__add", "shop__echo", "shop__fail", "shop__image", "shop__resources", "shop__sleep", "shop__weather", "shop__whoami"}
	cases := []struct {
		name   string
		filter botconfig.MCPToolFilter
		want   []string
	}{
		{"no lists expose every tool", botconfig.MCPToolFilter{}, all},
		{"an allow list exposes only its tools", botconfig.MCPToolFilter{Allow: []string{"echo", "add"}}, []string{"shop__add", "shop__echo"}},
		{"a deny list hides its tools", botconfig.MCPToolFilter{Deny: []string{"sleep", "fail", "whoami", "resources"}},
			[]string{"shop__add", "shop__echo", "shop__image", "shop__weather"}},
		{"deny wins over allow", botconfig.MCPToolFilter{Allow: []string{"echo", "add"}, Deny: []string{"add"}}, []string{"shop__echo"}},
		{"an allowed tool the server lacks is simply absent", botconfig.MCPToolFilter{Allow: []string{"echo", "teleport"}}, []string{"shop__echo"}},
	}
	pool := inMemoryPool(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server := botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp", Tools: tc.filter}
			got := names(mustTools(t, pool, server, nil))
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tools = %v, want %v", got, tc.want)
			}
		})
	}
}
