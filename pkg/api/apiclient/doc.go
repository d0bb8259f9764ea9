// Package apiclient is a small Go client for Parley's HTTP API, and the one
// home of the API's request and response types (types.go), which the server
// in pkg/api encodes.
//
//	c := apiclient.New("http://127.0.0.1:8080", "sk_...")
//	bots, err := c.ListBots(ctx, "acme", "")
//
// Every failed call returns an *Error carrying the HTTP status, the stable
// code and, for invalid input, the JSON pointers of what is wrong:
//
//	var apiErr *apiclient.Error
//	if errors.As(err, &apiErr) && apiErr.Code == apiclient.CodeInvalid { ... }
package apiclient
