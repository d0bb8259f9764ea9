// Package redact scrubs secret values from text that leaves Parley's hands:
// tool results the model reads, errors, logs and events.
//
// A server may echo a secret it was sent in any encoding its language
// produces (PHP's json_encode writes "\/", Python's json.dumps "\u00e9",
// a proxy percent-encodes, an HTML error page uses entities, a debug
// endpoint shows the Basic auth header in base64), so a plain string
// replace is not enough. Build one Redactor per set of secrets and use it
// for every text:
//
//	r := redact.New(apiKey, token) // nil-safe; empty values are ignored
//	content = r.Redact(content)    // every spelling becomes "[redacted]"
//
// Redact covers each character of a secret written as itself, JSON-escaped
// (\/, \", \uXXXX in either case, surrogate pairs), percent-encoded (either
// case, + for a space) or as an HTML character reference (named, decimal,
// hex), mixed freely within one secret; base64 in the standard or URL-safe
// alphabet, padded or not, alone or inside a longer encoded value (Basic
// auth's user:secret), its characters escaped as above; and hex in either
// case. Encodings layered on each other (base64 of a JSON-escaped secret)
// are not undone.
package redact
