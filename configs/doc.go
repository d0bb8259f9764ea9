// Package configs embeds Parley's default files: the JSON Schemas of an agent
// config, of a bot's conversation tests and of each webhook event, the
// casbin model and policy, and the model catalog.
package configs
