package mcptool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestAllKeepsTheReachableServersAndNamesTheOthers(t *testing.T) {
	up := startHTTPServer(t, false)
	down := startHTTPServer(t, true)
	downURL := down.URL
	down.Close()
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, up.URL)})
	servers := []botconfig.MCPServer{
		{Name: "shop", Transport: botconfig.TransportHTTP, URL: up.URL, Tools: botconfig.MCPToolFilter{Allow: []string{"echo"}}},
		{Name: "gone", Transport: botconfig.TransportSSE, URL: downURL},
		{Name: "local", Transport: botconfig.TransportStdio, Command: "/bin/true"},
		{Name: "more", Transport: botconfig.TransportHTTP, URL: up.URL, Tools: botconfig.MCPToolFilter{Allow: []string{"add"}}},
	}
	tools, err := mcptool.All(context.Background(), pool, tenant, servers, nil)

	var got []string
	for _, tl := range tools {
		got = append(got, tl.Definition().Name)
	}
	if strings.Join(got, ",") != "shop__echo,more__add" {
		t.Errorf("tools = %v, want shop__echo then more__add", got)
	}
	for _, name := range []string{`"gone"`, `"local"`} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want it to name server %s", err, name)
		}
	}
	if err != nil && strings.Contains(err.Error(), `"shop"`) {
		t.Errorf("err = %v names a server that worked", err)
	}
}

func TestAllSkipsADisabledServer(t *testing.T) {
	srv := startHTTPServer(t, false)
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	off := false
	servers := []botconfig.MCPServer{
		{Name: "shop", Transport: botconfig.TransportHTTP, URL: srv.URL, Tools: botconfig.MCPToolFilter{Allow: []string{"echo"}}},
		{Name: "off", Transport: botconfig.TransportHTTP, URL: srv.URL, Enabled: &off},
	}
	tools, err := mcptool.All(context.Background(), pool, tenant, servers, nil)
	if err != nil || len(tools) != 1 || tools[0].Definition().Name != "shop__echo" {
		t.Fatalf("tools = %d, err = %v; want shop__echo alone", len(tools), err)
	}
	if n := srv.sessions.Load(); n != 1 {
		t.Errorf("the server saw %d sessions, want 1: the disabled server must not connect", n)
	}
}
