package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// TestTheSeedAgentConfigRunsThroughTheAPI saves the seed's agent config
// (section 5.11.1, verbatim but for its CRM host) and runs the seed's own
// example: the model's {"email": ...} reaches the CRM filled into the
// seed's {email} placeholder, with the dialog id autofilled.
func TestTheSeedAgentConfigRunsThroughTheAPI(t *testing.T) {
	t.Parallel()
	seed, err := os.ReadFile("../../pkg/botconfig/testdata/seed/000-5.11.1-agent.json")
	if err != nil {
		t.Fatal(err)
	}
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		var mu sync.Mutex
		var got []string
		crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, r.Method+" "+r.URL.Path+" "+string(body))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"saved": true}`)
		}))
		defer crm.Close()
		config := strings.Replace(string(seed), "http://api.example.com", crm.URL, 1)
		env["PARLEY_OUTBOUND_ALLOW"] = "127.0.0.1/32"
		env["PARLEY_OUTBOUND_PORTS"] = crm.URL[strings.LastIndex(crm.URL, ":")+1:]
		llm := chatServer(t, env, llmtest.Options{})
		srv := startParley(t, env)
		ctx := context.Background()
		created, err := srv.client(e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		admin := srv.client(created.APIKey.Key)
		if _, err := admin.CreateBot(ctx, "acme", "seed", json.RawMessage(config)); err != nil {
			t.Fatalf("the seed's config is refused: %v", err)
		}
		if _, err := admin.Publish(ctx, "acme", "seed", 1); err != nil {
			t.Fatal(err)
		}
		d, err := admin.CreateDialog(ctx, "acme", "seed", apiclient.CreateDialogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "save_customer_information", Arguments: `{"email":"john@example.com"}`}}},
			llmtest.ServerReply{Text: "Saved, John."},
		)
		turn, err := admin.SendMessage(ctx, "acme", d.ID, "I want to schedule a demo, my email is john@example.com")
		if err != nil || turn.Done == nil || turn.Done.Text != "Saved, John." {
			t.Fatalf("turn = %+v, %v", turn, err)
		}
		want := `POST /contacts/add {"email":"john@example.com","dialogId":"` + d.ID + `"}`
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0] != want {
			t.Fatalf("the CRM got %q, want %q", got, want)
		}
	})
}
