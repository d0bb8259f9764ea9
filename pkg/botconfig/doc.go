// Package botconfig loads, validates and compiles tenant agent configs.
//
// Load parses a config strictly; Validate returns every problem at once, each
// with the JSON pointer of the offending value; Compile turns a valid config
// into a Bot: the system prompt, tool specs with parsed endpoint templates,
// runtime limits with defaults, and a fingerprint. Compile is pure and
// deterministic.
package botconfig
