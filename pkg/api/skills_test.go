package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// skillBot keeps check_stock in a skill.
func skillBot(shopURL string) string {
	return `{"basic_settings": {"name": "Skilled"},
  "tools": [{"name": "check_stock", "description": "Check stock",
     "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
     "endpoint": {"url": "` + shopURL + `/stock/<item>", "method": "GET"}}],
  "skills": [{"name": "stock", "description": "Questions about what is in stock",
     "instructions": "Check the stock of each item the customer names, one call per item.", "tools": ["check_stock"]}],
  "llm": {"model": "gpt-4o-mini"}}`
}

func TestASkillIsLoadedWhenTheModelAsksAndStaysLoaded(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newChatEnv(t, st, dialog.Limits{})
		e.create(t, "skilled", skillBot(e.shop.URL))
		d := e.dialogWith(t, "skilled")
		before := len(e.llm.Requests())
		e.llm.Enqueue(toolCall("load_skill", `{"name":"stock"}`), toolCall("check_stock", `{"item":"tent"}`),
			llmtest.ServerReply{Text: "The tent is in stock."})
		if got := e.send(t, d, "is the tent in stock?"); got != "completed: The tent is in stock." {
			t.Fatalf("turn = %q", got)
		}
		reqs := e.llm.Requests()[before:]
		first := reqs[0].Request
		if names := first.ToolNames(); !slices.Equal(names, []string{"load_skill"}) {
			t.Fatalf("before loading, the model was offered %v, want load_skill only", names)
		}
		sys := first.System()
		if !strings.Contains(sys, "- stock: Questions about what is in stock") || strings.Contains(sys, "one call per item") {
			t.Fatalf("the prompt must list the skill by name and description only:\n%s", sys)
		}
		if names := reqs[1].Request.ToolNames(); !slices.Equal(names, []string{"load_skill", "check_stock"}) {
			t.Fatalf("after loading, the model was offered %v", names)
		}
		var loaded string
		for _, m := range reqs[1].Request.Messages {
			if m.Role == "tool" {
				loaded = m.Text()
			}
		}
		if !strings.Contains(loaded, "one call per item") {
			t.Fatalf("load_skill's result %q does not carry the instructions", loaded)
		}
		if e.shopCalls("GET /stock/tent") != 1 {
			t.Fatal("the skill's tool did not run")
		}

		// Another server, as after a restart or on another instance, keeps
		// the skill loaded: it is in the dialog's saved state.
		other, _ := e.serve(t, st)
		before = len(e.llm.Requests())
		e.llm.Enqueue(llmtest.ServerReply{Text: "Anything else?"})
		r := other.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text": "thanks"}`)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("message: %d %s", r.StatusCode, r.body)
		}
		if names := e.llm.Requests()[before].Request.ToolNames(); !slices.Equal(names, []string{"load_skill", "check_stock"}) {
			t.Fatalf("the next message offered %v; the loaded skill was forgotten", names)
		}
		if m := e.raw(t, "GET", "/metrics", "", "").body; !strings.Contains(m, `parley_skill_loads_total{outcome="ok"} 1`) {
			t.Errorf("/metrics does not count the skill load")
		}
	})
}
