// Package httptool turns a config's endpoint tools into tool.Tools. Each call
// renders the endpoint template with the model's arguments and the dialog's
// variables (botconfig.EndpointTemplate.Render), sends it through the
// SSRF-safe client from pkg/outbound, and turns the response into a Result
// the model can read:
//
//   - JSON bodies are compacted; bodies are capped (64 KiB by default) and a
//     cut is marked in the content and in Meta.Truncated;
//   - a non-2xx status is an is_error result with the status and a body
//     excerpt; a refused destination or redirect says why;
//   - GET, PUT, DELETE and HEAD are retried (through pkg/httpretry) on
//     connection errors and on 502, 503 and 504 with a short backoff (or a
//     Retry-After of at most 2 s; a longer one returns the answer at once);
//     POST and PATCH never are, since the server may have acted on the
//     first attempt;
//   - every text that leaves the tool (content, errors, logs) is scrubbed of
//     the tenant's secret values, including a server echoing them back.
//
// Build one tool per dialog, since the variables are the dialog's:
//
//	client := outbound.NewClient(policy, outbound.Options{}) // once, shared
//	t, err := httptool.New(spec, client, vars, httptool.Options{})
package httptool
