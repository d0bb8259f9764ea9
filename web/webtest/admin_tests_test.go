package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/platform"
)

// greetingTests is a test file for the support bot expecting want in the
// scripted reply "Hello there".
func greetingTests(want string) []byte {
	return []byte(`{"tests": [{"name": "greets", "turns": [{"user": "hi", "model": [{"text": "Hello there"}], "expect": {"reply_contains": ["` + want + `"]}}]}]}`)
}

// signInWithKey signs in with the admin key and waits for the bot list.
func (w *world) signInWithKey() []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		w.signInAs(w.adminKey, "acme"),
		until(contains("document", "main table a", "Acme Support")),
	}
}

// openBotPage signs in with the admin key and opens the support bot's page.
func (w *world) openBotPage() []chromedp.Action[chromedp.Void] {
	return append(w.signInWithKey(),
		chromedp.Click(chromedp.CSS(`main table a`)),
		chromedp.WaitVisible(chromedp.CSS(`select[name="tests-version"]`)),
	)
}

// TestAdminRunsTestsAndTheGateBlocksAFailingVersion walks the Tests card:
// run a version's tests and read what failed, require passing tests, and
// see the publish of a failing version refused with the failing test.
func TestAdminRunsTestsAndTheGateBlocksAFailingVersion(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op := platform.Operator()
		config := strings.ReplaceAll(botConfig, "SHOP", w.shopURL)
		if _, _, err := w.svc.Versions().CreateWithTests(context.Background(), op, "acme", "support", []byte(w.draftConfig()), greetingTests("Hello")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.svc.Versions().CreateWithTests(context.Background(), op, "acme", "support", []byte(config), greetingTests("Bye")); err != nil {
			t.Fatal(err)
		}

		run(t, ctx, "sign in and open the bot", w.openBotPage()...)
		t.Run("the newest version's tests are loaded for the next save", func(t *testing.T) {
			if got := eval[string](t, ctx, `document.querySelector('textarea[name="tests"]').value`); !strings.Contains(got, `"Bye"`) {
				t.Fatalf("tests textarea = %q", got)
			}
		})
		t.Run("a failing test says what failed", func(t *testing.T) {
			run(t, ctx, "run v3",
				chromedp.SetValue(chromedp.CSS(`select[name="tests-version"]`), "3"),
				chromedp.Click(chromedp.Search(`//button[text()="Run tests"]`)),
				until(contains("document", ".test-results .summary.fail", "v3: 0 passed, 1 failed")),
				until(contains("document", ".test-results li.test.fail li", `reply does not contain "Bye"`)),
			)
		})
		t.Run("a passing version's tests pass", func(t *testing.T) {
			run(t, ctx, "run v2",
				chromedp.SetValue(chromedp.CSS(`select[name="tests-version"]`), "2"),
				chromedp.Click(chromedp.Search(`//button[text()="Run tests"]`)),
				until(contains("document", ".test-results .summary.ok", "v2: 1 passed, 0 failed")),
			)
		})
		t.Run("with the gate on, publishing the failing version is refused with its test", func(t *testing.T) {
			run(t, ctx, "gate and publish",
				chromedp.Click(chromedp.CSS(`input[name="require_passing_tests"]`)),
				until(contains("document", ".test-results .alert.ok", "Publishing now requires passing tests.")),
				chromedp.Click(chromedp.Search(`//tr[th[starts-with(normalize-space(.), "v3")]]//button[text()="Publish"]`)),
				until(contains("document", ".alert.error", "version 3 fails its tests")),
				until(contains("document", ".alert.error li", "greets: turn 1: reply does not contain")),
			)
			b, err := w.svc.Bots().Get(context.Background(), op, "acme", "support")
			if err != nil || b.PublishedVersion != 1 || !b.RequirePassingTests {
				t.Fatalf("bot = %+v, %v; want v1 still live and the gate on", b, err)
			}
			screenshot(t, ctx, "admin-tests")
		})
	})
}
