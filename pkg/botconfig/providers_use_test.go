package botconfig

import (
	"strings"
	"testing"
)

func TestUnknownModelsWarnsWhereAListLacksTheModel(t *testing.T) {
	bot := mustCompile(t, `{"basic_settings": {"name": "b"}, "llm": {"model": "gpt-5-turbo",
	  "fallbacks": [{"provider": "gw", "model": "big"}, {"provider": "gw", "model": "small-2025"}, {"provider": "free", "model": "any"}],
	  "quota_downgrade": {"at": 0.8, "provider": "gw", "model": "tiny"}}}`)
	models := map[string][]string{"": {"gpt-4o", "gpt-4o-mini"}, "gw": {"big", "small"}}
	var got []string
	for _, p := range bot.UnknownModels(models) {
		got = append(got, p.Pointer+": "+p.Message)
	}
	want := []string{
		`/llm/model: model "gpt-5-turbo" is not among the default provider's models (gpt-4o, gpt-4o-mini)`,
		`/llm/quota_downgrade/model: model "tiny" is not among provider "gw"'s models (big, small)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("UnknownModels =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps := bot.UnknownModels(nil); len(ps) != 0 {
		t.Errorf("without lists: %v, want no warnings", ps)
	}
}
