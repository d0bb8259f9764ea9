// Package configs embeds Parley's default files: the agent-config JSON Schema,
// the casbin model and policy, and the model catalog.
package configs
