package botconfig

import (
	"strings"
	"testing"
)

func TestShowToEndUserPicksTheToolsWhoseCallsEndUsersSee(t *testing.T) {
	b := mustCompile(t, doc(
		`"tools": [
		  {"name": "track_parcel", "description": "d", "show_to_end_user": true, "endpoint": {"url": "https://shop.example/track"}},
		  {"name": "lookup_customer", "description": "d", "endpoint": {"url": "https://crm.example/c"}}]`,
		`"native_tools": ["current_time"]`,
		`"mcp_servers": [
		  {"name": "weather", "transport": "http", "url": "https://mcp.example/w", "show_to_end_user": true},
		  {"name": "crm", "transport": "http", "url": "https://mcp.example/c"}]`))
	cases := []struct {
		tool string
		want bool
	}{
		{"track_parcel", true},
		{"lookup_customer", false},
		{"weather__forecast", true},
		{"crm__find_customer", false},
		{"current_time", false},
		{"no_such_tool", false},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			if got := b.ShowsToEndUser(tc.tool); got != tc.want {
				t.Fatalf("ShowsToEndUser(%q) = %v; want %v", tc.tool, got, tc.want)
			}
		})
	}
}

func TestShowToEndUserMustBeABoolean(t *testing.T) {
	ps := loadProblems(t, doc(`"tools": [{"name": "t", "description": "d", "show_to_end_user": "yes", "endpoint": {"url": "https://shop.example/t"}}]`))
	if len(ps) == 0 || !strings.Contains(ps.Error(), "/tools/0/show_to_end_user") {
		t.Fatalf("problems %v; want one at /tools/0/show_to_end_user", ps)
	}
}
