// Package outbound is the one HTTP client factory for tenant-controlled URLs
// (HTTP tools, remote MCP servers, webhooks). A tenant writes the URL, so a
// request must never reach the platform's own network: the client refuses
// loopback, private, link-local (cloud metadata), CGNAT, multicast,
// unspecified, broadcast, IPv4-mapped, NAT64, 6to4, Teredo, documentation,
// benchmarking and reserved addresses, and every port but 80, 443 and the
// operator's extra ports.
//
// The check runs on the resolved address at dial time, on every connection,
// so DNS rebinding and redirects cannot get around it; legacy IPv4 spellings
// (http://2130706433/, http://0x7f.1/) are read as the address they mean.
// Only same-origin redirects are followed, and the environment's proxy is
// never used.
//
// Usage, once per policy (the operator's PARLEY_OUTBOUND_ALLOW and
// PARLEY_OUTBOUND_PORTS):
//
//	policy, err := outbound.ParsePolicy(settings.OutboundAllow, settings.OutboundPorts)
//	client := outbound.NewClient(policy, outbound.Options{})
//	resp, err := client.Do(req)
//	if err != nil {
//		return outbound.CleanError(err) // no query strings in messages
//	}
//	body, truncated, err := outbound.ReadBody(resp.Body, policy.BodyLimit())
//
// Refusals are *DeniedError and *RedirectError, worded for the tenant and
// naming the setting the operator would change. See Policy for how
// exceptions take precedence.
package outbound
