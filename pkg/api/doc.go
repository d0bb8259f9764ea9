// Package api is Parley's HTTP layer (gin): routes, authentication, SSE
// streaming and the mapping of errors to statuses.
package api
