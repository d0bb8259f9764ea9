package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// The example tenants' conversation tests run in CI through this test.
func TestParleyTestRunsTheExampleTenantsTests(t *testing.T) {
	t.Parallel()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, errOut := runValidateCmd(t, "test", "--junit", junit, "../../tenants")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, bot := range []string{"acme-outdoor/tests/support.json", "acme-outdoor/tests/gear-guide.json", "acme-outdoor/tests/trip-planner.json", "harbor-physio/tests/booking.json"} {
		if !strings.Contains(out, bot) {
			t.Errorf("output does not mention %s:\n%s", bot, out)
		}
	}
	if strings.Contains(out, "FAIL") || !strings.Contains(out, " 0 failed") {
		t.Fatalf("output = %s", out)
	}
	if _, err := os.Stat(junit); err != nil {
		t.Fatal(err)
	}
}

// testTenant writes a one-bot tenant directory with the given test file.
func testTenant(t *testing.T, tests string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	for _, d := range []string{"bots", "tests"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeValidateFile(t, dir, "tenant.json", `{"name": "Shop"}`)
	writeValidateFile(t, dir, "bots/helper.json", `{
  "basic_settings": {"name": "Helper"},
  "tools": [{"name": "lookup", "description": "Look up an order",
    "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
    "endpoint": {"url": "https://shop.example.com/orders/<order>"}}],
  "native_tools": ["handoff_to_human"]
}`)
	return writeValidateFile(t, dir, "tests/helper.json", tests)
}

const lookupTurn = `{"user": "Where is order 7?",
  "model": [{"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}]}, {"text": "Order 7 has shipped."}],
  "expect": %s}`

func TestParleyTestReportsWhatFailed(t *testing.T) {
	t.Parallel()
	fixture := `"fixtures": {"lookup": {"result": {"status": "shipped"}}},`
	tests := []struct {
		name string
		file string
		code int
		want []string
	}{
		{"expectations that hold pass", `{` + fixture + `"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}], "reply_contains": ["shipped"], "stop_reason": "completed", "handoff": false}`, 1) + `]}]}`,
			0, []string{"ok   ", "1 passed, 0 failed"}},
		{"a reply without the expected text fails", `{` + fixture + `"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{"reply_contains": ["delivered"]}`, 1) + `]}]}`,
			1, []string{"FAIL", `turn 1: reply does not contain "delivered": "Order 7 has shipped."`, "0 passed, 1 failed"}},
		{"a reply not matching the pattern fails", `{` + fixture + `"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{"reply_matches": ["^Sorry"]}`, 1) + `]}]}`,
			1, []string{`reply does not match /^Sorry/`}},
		{"a call with other arguments fails", `{` + fixture + `"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{"tool_calls": [{"name": "lookup", "arguments": {"order": "8"}}]}`, 1) + `]}]}`,
			1, []string{`want a call to lookup {"order":"8"} in order, got lookup {"order":"7"}`}},
		{"a call where none was expected fails", `{` + fixture + `"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{"tool_calls": []}`, 1) + `]}]}`,
			1, []string{`want no tool calls, got lookup {"order":"7"}`}},
		{"a wrong stop reason and a missing handoff fail", `{` + fixture + `"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{"stop_reason": "handoff", "handoff": true}`, 1) + `]}]}`,
			1, []string{`stop reason is "completed", want "handoff"`, `the bot did not hand off`}},
		{"a tool without a fixture fails the test clearly", `{"tests": [{"name": "t", "turns": [` +
			strings.Replace(lookupTurn, "%s", `{}`, 1) + `]}]}`,
			1, []string{`turn 1: the model called lookup {"order":"7"}, which has no fixture in this test`}},
		{"scripted replies the loop never used fail", `{` + fixture + `"tests": [{"name": "t", "turns": [
			{"user": "hi", "model": [{"text": "Hello"}, {"text": "again"}], "expect": {}}]}]}`,
			1, []string{`turn 1: 1 scripted model replies were not used`}},
		{"a script that runs out fails", `{` + fixture + `"tests": [{"name": "t", "turns": [
			{"user": "hi", "model": [{"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}]}], "expect": {}}]}]}`,
			1, []string{`the scripted model refused the conversation: script exhausted`}},
		{"a fixture for a tool the bot lacks fails", `{"fixtures": {"lokup": {"result": "x"}}, "tests": [{"name": "t", "turns": [{"user": "hi", "model": [{"text": "Hello"}], "expect": {}}]}]}`,
			1, []string{`fixtures name tools the bot does not have: lokup`}},
		{"an invalid test file says where", `{"tests": [{"name": "t", "turns": [{"user": "hi", "expect": {"stop_reason": "done", "reply_matches": ["("]}}]}]}`,
			1, []string{"/tests/0/turns/0/expect/stop_reason: unknown stop reason", "/tests/0/turns/0/expect/reply_matches/0: not a regular expression"}},
		{"an unknown field is an error", `{"tests": [], "fixture": {}}`,
			1, []string{`unknown field "fixture"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := testTenant(t, tc.file)
			code, out, errOut := runValidateCmd(t, "test", path)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestParleyTestWritesJUnitWithTheFailures(t *testing.T) {
	t.Parallel()
	path := testTenant(t, `{"fixtures": {"lookup": {"result": "shipped"}}, "tests": [
	  {"name": "passes", "turns": [{"user": "hi", "model": [{"text": "Hello"}], "expect": {"reply_contains": ["Hello"]}}]},
	  {"name": "fails", "turns": [{"user": "hi", "model": [{"text": "Hello"}], "expect": {"reply_contains": ["Bye"]}}]}]}`)
	junit := filepath.Join(t.TempDir(), "out.xml")
	code, out, _ := runValidateCmd(t, "test", "--junit", junit, filepath.Dir(filepath.Dir(path)))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, data)
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("junit = %+v", doc)
	}
	c := doc.Suites[0].Cases[1]
	if c.Name != "fails" || c.Failure == nil || !strings.Contains(c.Failure.Message, `reply does not contain "Bye"`) {
		t.Fatalf("failing case = %+v", c)
	}
}

func TestParleyTestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"test"}, {"test", "--nope", "x"}, {"test", "no/such/dir"}} {
		if code, _, errOut := runValidateCmd(t, args...); code != 2 {
			t.Errorf("parley %v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}

// With --live the model comes from the PARLEY_LLM_* settings (here the strict
// fake server) and the file's scripts are ignored; fixtures still answer.
func TestParleyTestLiveAsksTheConfiguredModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-live-test"})
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "lookup", Arguments: `{"order":"7"}`}}},
		llmtest.ServerReply{Text: "Order 7 has shipped."},
	)
	path := testTenant(t, `{"fixtures": {"lookup": {"result": "status: shipped"}}, "tests": [{"name": "live", "turns": [
	  {"user": "Where is order 7?", "model": [{"text": "a script --live ignores"}],
	   "expect": {"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}], "reply_contains": ["has shipped"], "stop_reason": "completed"}}]}]}`)
	env := parleyEnv{"PARLEY_LLM_BASE_URL": srv.URL(), "PARLEY_LLM_API_KEY": "sk-live-test"}
	code, out, errOut := runParley(t, env, "test", "--live", path)
	if code != 0 || !strings.Contains(out, "1 passed, 0 failed") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("the model was asked %d times, want 2", n)
	}
	if last, _ := json.Marshal(srv.LastRequest()); !strings.Contains(string(last), "status: shipped") {
		t.Errorf("the fixture did not reach the model as the tool result: %s", last)
	}
}
