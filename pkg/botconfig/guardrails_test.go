package botconfig

import (
	"strings"
	"testing"
)

var guardrailMistakes = []mistakeCase{
	{"an unknown kind of personal data is refused by the schema", doc(`"guardrails": {"pii": {"redact": ["passport"], "in": ["model"]}}`), "/guardrails/pii/redact/0", "must be one of"},
	{"an unknown place to mask in is refused by the schema", doc(`"guardrails": {"pii": {"redact": ["email"], "in": ["emails"]}}`), "/guardrails/pii/in/0", "must be one of"},
	{"masking without a kind or pattern asks for one", doc(`"guardrails": {"pii": {"in": ["model"]}}`), "/guardrails/pii/redact", "name at least one kind"},
	{"a pattern that is not RE2 names its regex", doc(`"guardrails": {"pii": {"patterns": [{"name": "cust", "regex": "(?=CUST)\\d+"}], "in": ["model"]}}`), "/guardrails/pii/patterns/0/regex", "not a usable RE2 regular expression"},
	{"a pattern that matches empty text is refused", doc(`"guardrails": {"pii": {"patterns": [{"name": "cust", "regex": "x*"}], "in": ["model"]}}`), "/guardrails/pii/patterns/0/regex", "matches empty text"},
	{"a pattern named like a built-in kind is refused", doc(`"guardrails": {"pii": {"patterns": [{"name": "email", "regex": "x+"}], "in": ["model"]}}`), "/guardrails/pii/patterns/0/name", "is taken"},
	{"two patterns with one name are refused at the second", doc(`"guardrails": {"pii": {"patterns": [{"name": "cust", "regex": "x+"}, {"name": "cust", "regex": "y+"}], "in": ["model"]}}`), "/guardrails/pii/patterns/1/name", "is taken"},
	{"a pattern name with capitals is refused", doc(`"guardrails": {"pii": {"patterns": [{"name": "Cust", "regex": "x+"}], "in": ["model"]}}`), "/guardrails/pii/patterns/0/name", "lower-case letters"},
	{"a blocked topic without a word is refused", doc(`"guardrails": {"blocked_topics": ["ok", "!!"]}`), "/guardrails/blocked_topics/1", "at least one word"},
	{"an unknown action is refused", doc(`"guardrails": {"action": "ban"}`), "/guardrails/action", "must be one of"},
	{"max_message_chars of 0 is refused", doc(`"guardrails": {"max_message_chars": 0}`), "/guardrails/max_message_chars", "greater than or equal to 1"},
	{"moderation on something else is refused", doc(`"guardrails": {"moderation": {"on": ["tools"]}}`), "/guardrails/moderation/on/0", "must be one of"},
}

func TestEachGuardrailMistakeNamesItsPointer(t *testing.T) {
	for _, tt := range guardrailMistakes {
		t.Run(tt.name, func(t *testing.T) {
			ps := loadProblems(t, tt.data)
			if len(ps) != 1 || ps[0].Pointer != tt.pointer || !strings.Contains(ps[0].Message, tt.message) {
				t.Fatalf("problems = %v\nwant one at %s: ...%s...", ps, tt.pointer, tt.message)
			}
		})
	}
}

func TestGuardrailsCompileWithDefaults(t *testing.T) {
	bot := mustCompile(t, doc(`"guardrails": {"pii": {"redact": ["email", "card"], "patterns": [{"name": "cust", "regex": "CUST-\\d{6}"}], "in": ["model", "webhooks"]}, "blocked_topics": ["crypto"], "moderation": {"provider": "mod"}}`))
	g := bot.Guardrails
	switch {
	case !g.MasksText() || !g.Masks(PIIInWebhooks) || g.Masks(PIIInLogs):
		t.Fatalf("masks in %v", g.PIIIn)
	case len(g.PII.Find("a@b.co CUST-123456 4111111111111111")) != 3:
		t.Fatalf("the detector finds %v", g.PII.Find("a@b.co CUST-123456 4111111111111111"))
	case g.Action != "refuse" || g.Reply != DefaultGuardrailReply || g.ToolInjection != "flag":
		t.Fatalf("defaults = %q %q %q", g.Action, g.Reply, g.ToolInjection)
	case g.Moderation == nil || !g.Moderation.Input || !g.Moderation.Output:
		t.Fatalf("moderation = %+v", g.Moderation)
	case !g.Screens():
		t.Fatal("the bot screens nothing")
	}
	uses := bot.ProviderUses()
	if len(uses) != 1 || uses[0].Pointer != "/guardrails/moderation/provider" {
		t.Fatalf("ProviderUses = %+v, want the moderation provider", uses)
	}
}
