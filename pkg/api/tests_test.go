package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// lookupTests is a test file for testdata/bot.json whose one test expects
// reply text; the scripted model answers "Order 7 has shipped.".
func lookupTests(want string) json.RawMessage {
	return json.RawMessage(`{
  "fixtures": {"lookup_order": {"result": {"status": "shipped"}}},
  "tests": [
    {"name": "greets", "turns": [{"user": "hi", "model": [{"text": "Hi! How can I help?"}], "expect": {"tool_calls": []}}]},
    {"name": "looks up an order", "turns": [{"user": "Where is order 7?",
      "model": [{"tool_calls": [{"name": "lookup_order", "arguments": {"order": "7"}}]}, {"text": "Order 7 has shipped."}],
      "expect": {"tool_calls": [{"name": "lookup_order", "arguments": {"order": "7"}}], "reply_contains": ["` + want + `"]}}]}
  ]}`)
}

func apiError(t *testing.T, err error, code string) *apiclient.Error {
	t.Helper()
	var e *apiclient.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err = %v, want an API error %s", err, code)
	}
	return e
}

func TestBotTestsRunThroughTheAPIAndGatePublishing(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		cl := e.client(e.mustCreateTenant(t, "acme"))
		ctx := context.Background()
		raw, err := json.Marshal(apiclient.CreateBotRequest{Slug: "helper", Config: botConfig(t), Tests: lookupTests("shipped")})
		if err != nil {
			t.Fatal(err)
		}
		var created apiclient.BotWithVersion
		if err := cl.Do(ctx, "POST", "/v1/tenants/acme/bots", json.RawMessage(raw), &created); err != nil {
			t.Fatal(err)
		}
		if created.Version.Number != 1 || len(created.Version.Tests) == 0 {
			t.Fatalf("version 1 = %+v, want its tests stored", created.Version)
		}
		v2, err := cl.CreateVersionWithTests(ctx, "acme", "helper", botConfig(t), lookupTests("delivered"))
		if err != nil {
			t.Fatal(err)
		}
		if v2.Number != 2 {
			t.Fatalf("same config with other tests is version %d, want a new version 2", v2.Number)
		}

		t.Run("a version whose tests hold passes, with one result per test", func(t *testing.T) {
			run, err := cl.RunTests(ctx, "acme", "helper", 1)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Passed || run.Version != 1 || len(run.Results) != 2 || !run.Results[1].Passed || run.Results[1].Name != "looks up an order" {
				t.Fatalf("run = %+v", run)
			}
		})
		t.Run("a failing expectation fails its test and says why", func(t *testing.T) {
			run, err := cl.RunTests(ctx, "acme", "helper", 2)
			if err != nil {
				t.Fatal(err)
			}
			if run.Passed || !run.Results[0].Passed || run.Results[1].Passed ||
				!strings.Contains(strings.Join(run.Results[1].Failures, "\n"), `reply does not contain "delivered"`) {
				t.Fatalf("run = %+v", run)
			}
		})
		t.Run("publishing a failing version works while the bot does not require passing tests", func(t *testing.T) {
			if _, err := cl.Publish(ctx, "acme", "helper", 2); err != nil {
				t.Fatal(err)
			}
		})
		b, err := cl.UpdateBot(ctx, "acme", "helper", apiclient.UpdateBotRequest{RequirePassingTests: ptr(true)})
		if err != nil || !b.RequirePassingTests {
			t.Fatalf("update = %+v, %v", b, err)
		}
		t.Run("a failing expectation blocks a publish, listing the failing test", func(t *testing.T) {
			_, err := cl.Publish(ctx, "acme", "helper", 2)
			e := apiError(t, err, apiclient.CodeInvalid)
			if e.Status != 422 || len(e.Details) != 1 || e.Details[0].Pointer != "/tests/1" || !strings.Contains(e.Details[0].Message, `looks up an order: turn 1: reply does not contain "delivered"`) {
				t.Fatalf("error = %+v", e)
			}
			got, _ := cl.GetBot(ctx, "acme", "helper")
			if got.PublishedVersion != 2 {
				t.Fatalf("published = %d, want 2 still", got.PublishedVersion)
			}
		})
		t.Run("a version whose tests pass publishes", func(t *testing.T) {
			got, err := cl.Publish(ctx, "acme", "helper", 1)
			if err != nil || got.PublishedVersion != 1 {
				t.Fatalf("publish = %+v, %v", got, err)
			}
		})
		t.Run("a version without tests cannot be published under the gate", func(t *testing.T) {
			v3, err := cl.CreateVersion(ctx, "acme", "helper", botConfig(t))
			if err != nil {
				t.Fatal(err)
			}
			e := apiError(t, func() error { _, err := cl.Publish(ctx, "acme", "helper", v3.Number); return err }(), apiclient.CodeInvalid)
			if !strings.Contains(e.Message, "has no tests") {
				t.Fatalf("error = %+v", e)
			}
			apiError(t, func() error { _, err := cl.RunTests(ctx, "acme", "helper", v3.Number); return err }(), apiclient.CodeInvalid)
		})
		t.Run("invalid tests are refused with pointers into the body", func(t *testing.T) {
			_, err := cl.CreateVersionWithTests(ctx, "acme", "helper", botConfig(t), json.RawMessage(`{"tests": [{"name": "", "turns": []}]}`))
			e := apiError(t, err, apiclient.CodeInvalid)
			pointers := map[string]bool{}
			for _, d := range e.Details {
				pointers[d.Pointer] = true
			}
			if !pointers["/tests/tests/0/name"] || !pointers["/tests/tests/0/turns"] {
				t.Fatalf("details = %+v", e.Details)
			}
		})
		t.Run("another tenant's bot is not found", func(t *testing.T) {
			other := e.client(e.mustCreateTenant(t, "globex"))
			_, err := other.RunTests(ctx, "acme", "helper", 1)
			apiError(t, err, apiclient.CodeNotFound)
		})
	})
}

func ptr[T any](v T) *T { return &v }
