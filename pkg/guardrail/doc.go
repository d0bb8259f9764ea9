// Package guardrail holds the text checks of a bot's guardrails that need
// no model: blocked topics, matched on words whatever their case and
// accents, and a heuristic for prompt injection in tool outputs. It
// stores nothing and knows no tenant; pkg/dialog decides what a fired rule
// does (docs/guardrails.md).
package guardrail
