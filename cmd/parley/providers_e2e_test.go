package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// fallbackConfig is a bot on Claude that falls back to an OpenAI model.
const fallbackConfig = `{"basic_settings": {"name": "Claude", "greeting": "Hi"}, "native_tools": ["current_time"],
  "llm": {"provider": "anthropic", "model": "claude-sonnet-4-5", "thinking_budget": 1024, "max_tokens": 512,
          "fallbacks": [{"provider": "openai", "model": "gpt-4o-mini"}]}}`

// TestABotOnClaudeFallsOverToOpenAIOnAnOverload runs the real program with
// two providers, each a strict fake: Anthropic's answers a tool call
// (with thinking), then is overloaded (529, every retry too); the turn
// moves to the OpenAI-compatible fallback, which answers from the same
// conversation. Usage is metered per provider.
func TestABotOnClaudeFallsOverToOpenAIOnAnOverload(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		gpt := chatServer(t, env, llmtest.Options{FragmentSize: 4})
		claude := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-ant-e2e", FragmentSize: 4})
		env["PARLEY_ANTHROPIC_API_KEY"] = "sk-ant-e2e"
		env["PARLEY_ANTHROPIC_BASE_URL"] = claude.BaseURL()
		srv := startParley(t, env)
		ctx := context.Background()

		created, err := apiclient.New(srv.URL, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		key := created.APIKey.Key
		admin := apiclient.New(srv.URL, key)
		if _, err := admin.CreateBot(ctx, "acme", "echo", json.RawMessage(fallbackConfig)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Publish(ctx, "acme", "echo", 1); err != nil {
			t.Fatal(err)
		}
		d := newDialog(t, srv.URL, key)

		overloaded := llmtest.Overloaded()
		claude.Enqueue(
			llmtest.ServerReply{Thinking: "I need the time.", ToolCalls: []llmtest.ServerCall{{Name: "current_time", Arguments: `{}`}}},
			overloaded, overloaded, overloaded, // the first attempt and the provider's two retries
		)
		gpt.Enqueue(llmtest.ServerReply{Text: "It is noon."})

		resp := openStream(t, srv.URL, key, d, "What time is it?")
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var types []string
		var switched string
		for {
			typ, ok := nextEvent(sc)
			if !ok {
				break
			}
			if len(types) == 0 || types[len(types)-1] != typ {
				types = append(types, typ)
			}
			if typ == "provider_switch" && sc.Scan() {
				switched = sc.Text()
			}
		}
		joined := strings.Join(types, " ")
		for _, want := range []string{"thinking_delta", "tool_call", "tool_result", "provider_switch", "text_delta", "done"} {
			if !strings.Contains(joined, want) {
				t.Errorf("events %q lack %s", joined, want)
			}
		}
		if !strings.Contains(switched, `"from":"anthropic/claude-sonnet-4-5"`) || !strings.Contains(switched, `"to":"openai/gpt-4o-mini"`) {
			t.Errorf("provider_switch = %s", switched)
		}
		if m := dialogMessages(t, srv.URL, key, d); len(m) == 0 || m[len(m)-1] != "assistant:complete:It is noon." {
			t.Fatalf("messages %q", m)
		}

		// Both fakes accepted what they were sent; OpenAI's saw the tool
		// call Claude made and its result, without Claude's thinking.
		for _, r := range claude.Requests() {
			if r.Status != 200 && r.Status != 529 {
				t.Errorf("the Anthropic fake refused a request (%d): %s", r.Status, r.Body)
			}
		}
		last := gpt.LastRequest()
		if gpt.Requests()[0].Status != 200 || last == nil || len(last.Messages) != 4 || last.Messages[3].Role != "tool" {
			t.Fatalf("the OpenAI fake saw %+v", last)
		}

		report, err := admin.Usage(ctx, "acme", "", "", "provider")
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]apiclient.UsageRow{}
		for _, u := range report.Usage {
			by[u.Group] = u
		}
		if len(by) != 2 || by["anthropic"].InputTokens == 0 || by["openai"].InputTokens == 0 ||
			by["anthropic"].CostMicroUSD == 0 || by["openai"].CostMicroUSD == 0 {
			t.Fatalf("usage by provider = %+v, want tokens and cost for anthropic and openai", report.Usage)
		}
	})
}

// TestEachTenantsProviderUsesOnlyThatTenantsKey gives two tenants a
// provider of the same name, each on its own strict fake that accepts only
// that tenant's key: every request either fake sees carries its own
// tenant's key. A third tenant cannot name a provider it has not
// configured, even one another tenant has.
func TestEachTenantsProviderUsesOnlyThatTenantsKey(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		chatServer(t, env, llmtest.Options{}) // the server's own provider, unused here
		keys := map[string]string{"alpha": "sk-alpha-0123456789", "beta": "sk-beta-9876543210"}
		fakes := map[string]*llmtest.Server{
			"alpha": llmtest.NewServer(t, llmtest.Options{APIKey: keys["alpha"], Handler: echoWith("alpha")}),
			"beta": llmtest.NewServer(t, llmtest.Options{APIKey: keys["beta"],
				MessagesHandler: func(*llmtest.MessagesRequest) llmtest.ServerReply { return llmtest.ServerReply{Text: "beta answers"} }}),
		}
		portOf := func(u string) string { return u[strings.LastIndex(u, ":")+1:] }
		env["PARLEY_OUTBOUND_ALLOW"] = "127.0.0.1/32"
		env["PARLEY_OUTBOUND_PORTS"] = portOf(fakes["alpha"].BaseURL()) + "," + portOf(fakes["beta"].BaseURL())
		srv := startParley(t, env)
		ctx := context.Background()
		platformClient := apiclient.New(srv.URL, e2eToken)

		bot := `{"basic_settings": {"name": "Mine"}, "llm": {"provider": "mine", "model": "gpt-4o-mini"}}`
		specs := map[string]apiclient.PutProviderRequest{
			"alpha": {Kind: "openai", BaseURL: fakes["alpha"].URL(), APIKeySecret: "model_key", Headers: map[string]string{"X-Team": "alpha"}},
			"beta":  {Kind: "anthropic", BaseURL: fakes["beta"].BaseURL(), APIKeySecret: "model_key"},
		}
		admins := map[string]*apiclient.Client{}
		for _, slug := range []string{"alpha", "beta", "gamma"} {
			created, err := platformClient.CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: slug, Name: slug})
			if err != nil {
				t.Fatal(err)
			}
			admins[slug] = apiclient.New(srv.URL, created.APIKey.Key)
		}
		for slug, spec := range specs {
			admin := admins[slug]
			if _, err := admin.PutSecret(ctx, slug, "model_key", keys[slug]); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.PutProvider(ctx, slug, "mine", spec); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.CreateBot(ctx, slug, "mine", json.RawMessage(bot)); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Publish(ctx, slug, "mine", 1); err != nil {
				t.Fatal(err)
			}
		}

		t.Run("the providers list shows the secret's name, never the key", func(t *testing.T) {
			list, err := admins["alpha"].ListProviders(ctx, "alpha")
			if err != nil || len(list.Providers) != 1 || list.Providers[0].APIKeySecret != "model_key" {
				t.Fatalf("providers %+v, %v", list, err)
			}
			raw, _ := json.Marshal(list)
			if strings.Contains(string(raw), keys["alpha"]) {
				t.Fatalf("the list holds the key: %s", raw)
			}
		})

		for _, slug := range []string{"alpha", "beta", "alpha"} {
			d, err := admins[slug].CreateDialog(ctx, slug, "mine", apiclient.CreateDialogRequest{})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := admins[slug].SendMessage(ctx, slug, d.ID, "hello")
			if err != nil || turn.Done == nil || turn.Done.Text != slug+" answers" {
				t.Fatalf("%s: turn %+v (error %+v), %v", slug, turn, turn.Error, err)
			}
		}
		for slug, fake := range fakes {
			recs := fake.Requests()
			if len(recs) == 0 {
				t.Fatalf("%s's provider was never called", slug)
			}
			for _, r := range recs {
				got := r.Header.Get("X-Api-Key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				if got != keys[slug] || r.Status != 200 {
					t.Fatalf("%s's provider got key %q (status %d), want only %s's", slug, got, r.Status, slug)
				}
			}
		}
		if h := fakes["alpha"].Requests()[0].Header.Get("X-Team"); h != "alpha" {
			t.Errorf("the provider's default header arrived as %q", h)
		}

		t.Run("a tenant cannot name another tenant's provider", func(t *testing.T) {
			_, err := admins["gamma"].CreateBot(ctx, "gamma", "mine", json.RawMessage(bot))
			e := apiError(t, err, 422)
			if len(e.Details) != 1 || e.Details[0].Pointer != "/llm/provider" || !strings.Contains(e.Details[0].Message, `unknown provider "mine"`) {
				t.Fatalf("error %+v", e)
			}
		})
	})
}

// echoWith answers every chat request with "<name> answers".
func echoWith(name string) func(*llmtest.ChatRequest) llmtest.ServerReply {
	return func(*llmtest.ChatRequest) llmtest.ServerReply { return llmtest.ServerReply{Text: name + " answers"} }
}

// TestATenantProviderAtAPrivateAddressIsRefusedWhenSaved: a provider's
// base_url is checked against the outbound policy as it is saved, as a
// webhook's URL is, so a tenant never learns of a refused address from a
// failing turn after three retries; the operator's PARLEY_OUTBOUND_ALLOW
// exceptions are honoured. Through the API and through parley apply.
func TestATenantProviderAtAPrivateAddressIsRefusedWhenSaved(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		chatServer(t, env, llmtest.Options{})
		env["PARLEY_OUTBOUND_ALLOW"] = "10.1.2.0/24"
		srv := startParley(t, env)
		ctx := context.Background()
		created, err := apiclient.New(srv.URL, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		admin := apiclient.New(srv.URL, created.APIKey.Key)
		for _, base := range []string{
			"http://169.254.169.254/latest/v1", // the cloud's metadata service
			"http://10.9.9.9/v1",
			"http://127.0.0.1/v1",
			"http://localhost/v1",
			"http://[::1]/v1",
			"http://10.1.2.3:8443/v1", // an allowed address on a port that is not
		} {
			t.Run("refuses "+base, func(t *testing.T) {
				_, err := admin.PutProvider(ctx, "acme", "mine", apiclient.PutProviderRequest{Kind: "openai", BaseURL: base})
				e := apiError(t, err, http.StatusUnprocessableEntity)
				if len(e.Details) != 1 || e.Details[0].Pointer != "/base_url" {
					t.Errorf("details %+v; want one at /base_url", e.Details)
				}
			})
		}
		t.Run("accepts an address PARLEY_OUTBOUND_ALLOW allows", func(t *testing.T) {
			if _, err := admin.PutProvider(ctx, "acme", "mine", apiclient.PutProviderRequest{Kind: "openai", BaseURL: "http://10.1.2.3/v1"}); err != nil {
				t.Fatal(err)
			}
		})
		list, err := admin.ListProviders(ctx, "acme")
		if err != nil || len(list.Providers) != 1 || list.Providers[0].BaseURL != "http://10.1.2.3/v1" {
			t.Fatalf("providers %+v, %v; want the allowed one only", list, err)
		}
		srv.stop()

		dir := t.TempDir()
		applytest.WriteFile(t, filepath.Join(dir, "beta", "tenant.json"), `{"name": "Beta"}`)
		applytest.WriteFile(t, filepath.Join(dir, "beta", "providers.json"), `{"meta": {"kind": "openai", "base_url": "http://169.254.169.254/v1"}}`)
		code, out, stderr := runParley(t, env, "apply", dir)
		if code != 1 || !strings.Contains(stderr, "providers.json") || !strings.Contains(stderr, "base_url") {
			t.Errorf("apply of a provider at the metadata address: exit %d\n%s%s", code, out, stderr)
		}
	})
}
