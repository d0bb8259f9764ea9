// Package httpretry is the one way Parley retries HTTP calls: a
// github.com/hashicorp/go-retryablehttp client with jittered exponential
// backoff that waits exactly what a server's Retry-After asks, and hands
// the caller the last response rather than a generic "giving up" error.
// The LLM provider (pkg/llm/openai) and the HTTP tools (pkg/tool/httptool)
// both use it, each with its own rule for what is worth another attempt.
//
//	rc := httpretry.New(outboundClient, 2, 200*time.Millisecond, 2*time.Second, check)
//	resp, err := rc.Do(req)
package httpretry
