package botconfig

import (
	"strings"
	"testing"
)

func TestTheDateInThePromptIsAnOption(t *testing.T) {
	const now = "2026-11-25T20:30:00Z" // a Wednesday evening in UTC, Thursday morning in Shanghai
	tests := []struct {
		name  string
		basic string
		want  string // the date line, "" for none
	}{
		{"left out by default", `"basic_settings": {"name": "B"}`, ""},
		{"in UTC unless a zone is named", `"basic_settings": {"name": "B", "include_date": true}`, "- Today's date: Wednesday, 2026-11-25 (time zone UTC)"},
		{"in the bot's zone, where the day may differ", `"basic_settings": {"name": "B", "include_date": true, "timezone": "Asia/Shanghai"}`,
			"- Today's date: Thursday, 2026-11-26 (time zone Asia/Shanghai)"},
		{"a zone alone does not add the date", `"basic_settings": {"name": "B", "timezone": "Asia/Shanghai"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustCompile(t, "{"+tt.basic+"}")
			got := b.Prompt(Vars{"now": now})
			if tt.want == "" {
				if strings.Contains(got, "Today's date") {
					t.Fatalf("prompt has a date:\n%s", got)
				}
				return
			}
			if !strings.Contains(got, "## Facts about this conversation\n") || !strings.Contains(got, "\n"+tt.want+"\n") && !strings.HasSuffix(got, "\n"+tt.want) {
				t.Fatalf("prompt lacks %q:\n%s", tt.want, got)
			}
			if !strings.HasPrefix(got, b.SystemPrompt) {
				t.Fatal("the date must follow the static prompt, which stays cacheable")
			}
		})
	}
	t.Run("an unknown zone is refused with its pointer", func(t *testing.T) {
		for _, tz := range []string{"Mars/Olympus", "Local", "../../etc/passwd"} {
			ps := loadProblems(t, `{"basic_settings": {"name": "B", "include_date": true, "timezone": "`+tz+`"}}`)
			if len(ps) != 1 || ps[0].Pointer != "/basic_settings/timezone" || !strings.Contains(ps[0].Message, "IANA") {
				t.Errorf("%s: problems %v", tz, ps)
			}
		}
	})
}
