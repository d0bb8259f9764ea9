// Package agent runs the loop every dialog of every tenant shares: call the
// model, record its message, run its tool calls, repeat until it answers
// without tools or a limit stops it. It knows nothing of databases or HTTP
// servers; the application injects providers, tools and hooks.
package agent
