package webtest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// A bot's guardrails are set in the form: the kinds of personal data to
// mask and where, and the blocked topics, which the JSON view then holds.
func TestTheFormSetsABotsGuardrails(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		run(t, ctx, "sign in", w.signInWithKey()...)
		run(t, ctx, "guardrails",
			chromedp.Navigate(w.api.URL+"/admin/#/t/acme/bots/support"),
			chromedp.WaitVisible(field("/basic_settings/name", "input")),
			openSection("guardrails"),
			typeIn("/guardrails/pii/redact", "textarea", "email\ncard"),
			typeIn("/guardrails/pii/in", "textarea", "model\nlogs"),
			typeIn("/guardrails/blocked_topics", "textarea", "crypto\nmedical advice"),
			until(contains("document", ".pill", "Valid")),
		)
		screenshot(t, ctx, "admin-form-guardrails")
		var config struct {
			Guardrails struct {
				PII struct {
					Redact []string `json:"redact"`
					In     []string `json:"in"`
				} `json:"pii"`
				BlockedTopics []string `json:"blocked_topics"`
			} `json:"guardrails"`
		}
		text := eval[string](t, ctx, editorText)
		if err := json.Unmarshal([]byte(text), &config); err != nil {
			t.Fatalf("the JSON view holds no JSON: %v\n%s", err, text)
		}
		g := config.Guardrails
		if !slices.Equal(g.PII.Redact, []string{"email", "card"}) || !slices.Equal(g.PII.In, []string{"model", "logs"}) ||
			!slices.Equal(g.BlockedTopics, []string{"crypto", "medical advice"}) {
			t.Fatalf("the JSON view holds %+v", g)
		}
	})
}
