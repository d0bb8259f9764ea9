package configs

import _ "embed"

// AgentConfigSchema is the draft-07 JSON Schema of an agent config, for
// editors and for pkg/botconfig's structural validation.
//
//go:embed agent-config.schema.json
var AgentConfigSchema []byte

// BotTestsSchema is the draft-07 JSON Schema of a bot's conversation test
// file (docs/testing.md), for editors.
//
//go:embed bot-tests.schema.json
var BotTestsSchema []byte
