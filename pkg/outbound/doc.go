// Package outbound is the one HTTP client factory for tenant-controlled URLs.
// Its clients refuse loopback, private, link-local, CGNAT, multicast and other
// special-purpose addresses, checked on the resolved IP at dial time, and
// allow only the configured ports and same-origin redirects.
package outbound
