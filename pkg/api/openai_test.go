package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// completionOut is the part of a chat completion these tests read.
type completionOut struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

type openaiErrOut struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// complete posts a chat completion and decodes a 200.
func (e *chatEnv) complete(t *testing.T, key, body string, headers ...string) (completionOut, rawResponse) {
	t.Helper()
	r := e.raw(t, "POST", "/v1/chat/completions", key, body, headers...)
	var out completionOut
	if r.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", r.StatusCode, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("completion %s: %v", r.body, err)
	}
	return out, r
}

func contentOf(c completionOut) string {
	if c.Choices[0].Message.Content == nil {
		return ""
	}
	return *c.Choices[0].Message.Content
}

// roles lists what the model was sent after the system prompt, as
// role:text or role:tool-call names.
func sentRoles(r *llmtest.ChatRequest) string {
	var out []string
	for _, m := range r.Messages[1:] {
		s := m.Role + ":" + m.Text()
		for _, c := range m.ToolCalls {
			s += "[" + c.Function.Name + "]"
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

func TestAChatCompletionWithoutADialogHeaderIsTheRequestsConversation(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		e.llm.Enqueue(llmtest.ServerReply{Text: "Blue, as before."})
		out, r := e.complete(t, e.key, `{"model":"helper","user":"ada","messages":[
			{"role":"system","content":"You are a pirate."},
			{"role":"user","content":"Favourite colour?"},
			{"role":"assistant","content":"Blue."},
			{"role":"user","content":[{"type":"text","text":"And "},{"type":"text","text":"now?"}]}]}`)
		sent := e.llm.LastRequest()
		t.Run("the answer is OpenAI's chat.completion with the bot's reply and usage", func(t *testing.T) {
			if out.Object != "chat.completion" || out.Model != "helper" || contentOf(out) != "Blue, as before." ||
				out.Choices[0].Message.Role != "assistant" || out.Choices[0].FinishReason != "stop" {
				t.Fatalf("completion %+v", out)
			}
			if out.Usage.PromptTokens == 0 || out.Usage.TotalTokens != out.Usage.PromptTokens+out.Usage.CompletionTokens {
				t.Fatalf("usage %+v", out.Usage)
			}
		})
		t.Run("the model gets the bot's prompt and the earlier messages, not the client's system message", func(t *testing.T) {
			if strings.Contains(sent.System(), "pirate") || !strings.Contains(sent.System(), "Shop") {
				t.Fatalf("system prompt %q", sent.System())
			}
			if got := sentRoles(sent); got != "user:Favourite colour? | assistant:Blue. | user:And now?" {
				t.Fatalf("sent %s", got)
			}
		})
		t.Run("the request's log line names tenant and dialog, and holds neither key nor text", func(t *testing.T) {
			logs := e.logs.String()
			if strings.Contains(logs, e.key) || strings.Contains(logs, "Favourite colour") {
				t.Fatalf("the log holds the key or the conversation:\n%s", logs)
			}
			for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) != nil || m["route"] != "/v1/chat/completions" {
					continue
				}
				if m["tenant_id"] == nil || m["dialog_id"] != r.Header.Get("X-Parley-Dialog") {
					t.Fatalf("log line %s", line)
				}
				return
			}
			t.Fatalf("no log line for the completion:\n%s", logs)
		})
		t.Run("a dialog is stored on the openai channel for the user and named in the header", func(t *testing.T) {
			id := r.Header.Get("X-Parley-Dialog")
			g := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+id, e.key, "")
			var d apiclient.DialogDetail
			if err := json.Unmarshal([]byte(g.body), &d); err != nil || g.StatusCode != 200 {
				t.Fatalf("%d %s", g.StatusCode, g.body)
			}
			if d.Channel != "openai" || d.UserID != "ada" || len(d.Messages) != 4 || d.Messages[3].Text != "Blue, as before." {
				t.Fatalf("dialog %+v", d)
			}
		})
	})
}

func TestTheDialogHeaderContinuesTheStoredDialog(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		e.llm.Enqueue(llmtest.ServerReply{Text: "Noted: Ada."})
		_, r := e.complete(t, e.key, `{"model":"helper","messages":[{"role":"user","content":"I am Ada."}]}`)
		id := r.Header.Get("X-Parley-Dialog")
		e.llm.Enqueue(llmtest.ServerReply{Text: "You are Ada."})
		// Only the new message: the dialog holds the rest.
		out, r2 := e.complete(t, e.key, `{"model":"helper","messages":[{"role":"user","content":"Who am I?"}]}`, "X-Parley-Dialog", id)
		if contentOf(out) != "You are Ada." || r2.Header.Get("X-Parley-Dialog") != id {
			t.Fatalf("completion %+v, header %q", out, r2.Header.Get("X-Parley-Dialog"))
		}
		if got := sentRoles(e.llm.LastRequest()); got != "user:I am Ada. | assistant:Noted: Ada. | user:Who am I?" {
			t.Fatalf("sent %s", got)
		}
	})
}

func TestRequestToolsComeBackAsToolCallsAndTheirResultsContinue(t *testing.T) {
	t.Parallel()
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather in a city",
		"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	first := `{"role":"user","content":"Weather in Oslo?"}`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}`
	result := `{"role":"tool","tool_call_id":"call_w","content":"-3 and snowing"}`
	for _, mode := range []string{"the request's conversation", "the stored dialog"} {
		t.Run("through "+mode, func(t *testing.T) {
			forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
				e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}})
				out, r := e.complete(t, e.key, `{"model":"helper",`+tools+`,"messages":[`+first+`]}`)
				if !slices.Contains(e.llm.LastRequest().ToolNames(), "get_weather") {
					t.Fatalf("the model was not offered the client's tool: %v", e.llm.LastRequest().ToolNames())
				}
				c := out.Choices[0]
				if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].ID != "call_w" ||
					c.Message.ToolCalls[0].Type != "function" || c.Message.ToolCalls[0].Function.Name != "get_weather" ||
					c.Message.ToolCalls[0].Function.Arguments != `{"city":"Oslo"}` {
					t.Fatalf("completion %+v", out)
				}
				e.llm.Enqueue(llmtest.ServerReply{Text: "Cold: -3 and snow."})
				var headers []string
				if mode == "the stored dialog" {
					headers = []string{"X-Parley-Dialog", r.Header.Get("X-Parley-Dialog")}
				}
				out, _ = e.complete(t, e.key, `{"model":"helper",`+tools+`,"messages":[`+first+`,`+call+`,`+result+`]}`, headers...)
				if contentOf(out) != "Cold: -3 and snow." || out.Choices[0].FinishReason != "stop" {
					t.Fatalf("completion %+v", out)
				}
				if got := sentRoles(e.llm.LastRequest()); got != "user:Weather in Oslo? | assistant:[get_weather] | tool:-3 and snowing" {
					t.Fatalf("sent %s", got)
				}
			})
		})
	}
}

func TestTheBotsOwnToolsRunOnTheServer(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		twoToolTurn(e)
		out, _ := e.complete(t, e.key, `{"model":"helper","messages":[{"role":"user","content":"A7? tents?"}]}`)
		if contentOf(out) != "A7 shipped and tents are in stock." || len(out.Choices[0].Message.ToolCalls) != 0 {
			t.Fatalf("completion %+v", out)
		}
		if e.shopCalls("GET /orders/A7") != 1 || e.shopCalls("GET /stock/tent") != 1 {
			t.Fatal("the bot's HTTP tools did not run")
		}
	})
}

// chunks parses an OpenAI stream: its data payloads, [DONE] included.
func chunks(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "event:") {
			t.Fatalf("OpenAI streams name no events: %q", line)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

func TestAStreamedChatCompletion(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		twoToolTurn(e)
		r := e.raw(t, "POST", "/v1/chat/completions", e.key,
			`{"model":"helper","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"A7? tents?"}]}`)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/event-stream" || r.Header.Get("X-Parley-Dialog") == "" {
			t.Fatalf("%d %v %s", r.StatusCode, r.Header, r.body)
		}
		data := chunks(t, r.body)
		if data[len(data)-1] != "[DONE]" {
			t.Fatalf("the stream does not end with [DONE]: %v", data)
		}
		var text strings.Builder
		var finish []string
		var usage map[string]any
		for i, d := range data[:len(data)-1] {
			var c map[string]any
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				t.Fatal(err)
			}
			if c["object"] != "chat.completion.chunk" || c["model"] != "helper" {
				t.Fatalf("chunk %v", c)
			}
			choices := c["choices"].([]any)
			if len(choices) == 0 {
				usage = c["usage"].(map[string]any)
				continue
			}
			ch := choices[0].(map[string]any)
			delta := ch["delta"].(map[string]any)
			if i == 0 && delta["role"] != "assistant" {
				t.Fatalf("first chunk %v", c)
			}
			if s, ok := delta["content"].(string); ok {
				text.WriteString(s)
			}
			if f, ok := ch["finish_reason"].(string); ok {
				finish = append(finish, f)
			}
		}
		if text.String() != "A7 shipped and tents are in stock." || !slices.Equal(finish, []string{"stop"}) {
			t.Fatalf("text %q, finish reasons %v", text.String(), finish)
		}
		if usage == nil || usage["total_tokens"].(float64) == 0 {
			t.Fatalf("no usage chunk although include_usage asked: %v", data)
		}
	})
}

func TestTheOpenAIFaceAnswersInOpenAIsErrorShape(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		pk, err := e.svc.APIKeys().Create(t.Context(), platform.Operator(), "shop",
			platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{"https://shop.example"}})
		if err != nil {
			t.Fatal(err)
		}
		user := `"messages":[{"role":"user","content":"hi"}]`
		paused, err := e.rt.Dialogs().Create(t.Context(), platform.Operator(), "shop", "helper", dialog.CreateDialogInput{History: []agent.Message{
			{Kind: agent.KindUser, Message: llm.UserText("where?")},
			{Kind: agent.KindAssistant, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: "c1", Name: "locate", Arguments: json.RawMessage(`{}`)}}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, key, body string
			headers         []string
			status          int
			typ, code       string
			param           string
		}{
			{"no key", "", `{"model":"helper",` + user + `}`, nil, 401, "authentication_error", "unauthorized", ""},
			{"a publishable key", pk.Key, `{"model":"helper",` + user + `}`, nil, 401, "authentication_error", "unauthorized", ""},
			{"the platform token", testPlatformToken, `{"model":"helper",` + user + `}`, nil, 401, "authentication_error", "unauthorized", ""},
			{"an unknown model", e.key, `{"model":"nobody",` + user + `}`, nil, 404, "invalid_request_error", "model_not_found", "model"},
			{"no model", e.key, `{` + user + `}`, nil, 400, "invalid_request_error", "bad_request", "model"},
			{"no messages", e.key, `{"model":"helper","messages":[]}`, nil, 400, "invalid_request_error", "bad_request", "messages"},
			{"two choices", e.key, `{"model":"helper","n":2,` + user + `}`, nil, 400, "invalid_request_error", "bad_request", "n"},
			{"an image part", e.key, `{"model":"helper","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, nil,
				400, "invalid_request_error", "bad_request", "messages[0].content[0].type"},
			{"an unknown role", e.key, `{"model":"helper","messages":[{"role":"wizard","content":"x"}]}`, nil,
				400, "invalid_request_error", "bad_request", "messages[0].role"},
			{"a tool result for no call", e.key, `{"model":"helper","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"x"}]}`, nil,
				400, "invalid_request_error", "bad_request", "messages[1].role"},
			{"an unanswered tool call before a user message", e.key, `{"model":"helper","messages":[{"role":"user","content":"x"},
				{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"y"}]}`, nil,
				400, "invalid_request_error", "bad_request", "messages[2]"},
			{"a conversation ending with the assistant", e.key, `{"model":"helper","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`, nil,
				400, "invalid_request_error", "bad_request", "messages"},
			{"a tool named like the bot's own", e.key, `{"model":"helper","tools":[{"type":"function","function":{"name":"lookup_order"}}],` + user + `}`, nil,
				400, "invalid_request_error", "bad_request", "tools[0].function.name"},
			{"a tool schema with a remote reference", e.key, `{"model":"helper","tools":[{"type":"function","function":{"name":"f","parameters":{"$ref":"https://evil.example/s.json"}}}],` + user + `}`, nil,
				400, "invalid_request_error", "bad_request", "tools[0].function.parameters"},
			{"a forced tool choice", e.key, `{"model":"helper","tool_choice":"required",` + user + `}`, nil, 400, "invalid_request_error", "bad_request", "tool_choice"},
			{"an unknown dialog", e.key, `{"model":"helper",` + user + `}`, []string{"X-Parley-Dialog", "dlg_nope"}, 404, "invalid_request_error", "not_found", ""},
			{"a result for a call the dialog does not wait for", e.key, `{"model":"helper","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"x"}]}`,
				[]string{"X-Parley-Dialog", paused.ID}, 400, "invalid_request_error", "invalid", "messages[1].tool_call_id"},
			{"a text too long", e.key, `{"model":"helper","messages":[{"role":"user","content":"` + strings.Repeat("a", dialog.MaxMessageChars+1) + `"}]}`, nil,
				400, "invalid_request_error", "invalid", "messages[0].content"},
			{"a user name too long", e.key, `{"model":"helper","user":"` + strings.Repeat("u", dialog.MaxUserIDLength+1) + `",` + user + `}`, nil,
				400, "invalid_request_error", "invalid", "user"},
			{"results while a dialog waits for nothing", e.key, `{"model":"helper","messages":[{"role":"tool","tool_call_id":"c1","content":"x"}]}`,
				[]string{"X-Parley-Dialog", e.dialog(t)}, 409, "invalid_request_error", "conflict", ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(t, "POST", "/v1/chat/completions", tc.key, tc.body, tc.headers...)
				var got openaiErrOut
				if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.StatusCode != tc.status {
					t.Fatalf("%d %s", r.StatusCode, r.body)
				}
				// OpenAI's SDKs retry a 409 unless told not to; this one cannot pass.
				if tc.status == http.StatusConflict && r.Header.Get("X-Should-Retry") != "false" {
					t.Fatalf("a 409 without X-Should-Retry: false: %v", r.Header)
				}
				g := got.Error
				if g.Type != tc.typ || g.Code == nil || *g.Code != tc.code || g.Message == "" {
					t.Fatalf("error %s", r.body)
				}
				if (tc.param == "") != (g.Param == nil) || (g.Param != nil && *g.Param != tc.param) {
					t.Fatalf("param in %s, want %q", r.body, tc.param)
				}
			})
		}
		if n := len(e.llm.Requests()); n != 0 {
			t.Fatalf("refused requests reached the model %d times", n)
		}
	})
}

func TestTheModelsFailureIsAServerError(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		for _, stream := range []bool{false, true} {
			e.llm.Enqueue(llmtest.QuotaExhausted())
			body := `{"model":"helper","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"hi"}]}`
			r := e.raw(t, "POST", "/v1/chat/completions", e.key, body)
			if stream {
				data := chunks(t, r.body)
				if r.StatusCode != 200 || !strings.Contains(data[len(data)-1], `"type":"server_error"`) {
					t.Fatalf("stream %d %s", r.StatusCode, r.body)
				}
				continue
			}
			var got openaiErrOut
			if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.StatusCode < 500 || got.Error.Type != "server_error" {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		}
	})
}

// OpenAI's SDKs retry a 5xx by themselves. A failed turn of a stored
// dialog has stored its text, which a retry would store once more; a
// request's own conversation makes a new dialog each time and may retry.
func TestAFailedTurnOfAStoredDialogIsNotRetried(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		for _, tc := range []struct {
			name    string
			headers []string
			retry   string
		}{
			{"continuing a stored dialog", []string{"X-Parley-Dialog", d}, "false"},
			{"the request's conversation", nil, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e.llm.Enqueue(llmtest.ServerFailure())
				r := e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`, tc.headers...)
				if r.StatusCode < 500 || r.Header.Get("X-Should-Retry") != tc.retry {
					t.Fatalf("%d X-Should-Retry %q, want %q: %s", r.StatusCode, r.Header.Get("X-Should-Retry"), tc.retry, r.body)
				}
			})
		}
	})
}

func TestTheOpenAIFaceIsMeteredAndHeldToTheQuota(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{DailyTokens: 100}, func(t *testing.T, e *chatEnv) {
		e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
		out, _ := e.complete(t, e.key, `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`)
		t.Run("usage counts the completion's tokens and turn", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/usage?group_by=bot", e.key, "")
			var rep apiclient.UsageReport
			if err := json.Unmarshal([]byte(r.body), &rep); err != nil || len(rep.Usage) != 1 {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			u := rep.Usage[0]
			if u.Turns != 1 || u.InputTokens != int64(out.Usage.PromptTokens) || u.OutputTokens != int64(out.Usage.CompletionTokens) {
				t.Fatalf("usage %+v, completion usage %+v", u, out.Usage)
			}
		})
		t.Run("past the daily quota the next completion is OpenAI's insufficient_quota, not to be retried", func(t *testing.T) {
			for _, stream := range []string{"false", "true"} {
				r := e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","stream":`+stream+`,"messages":[{"role":"user","content":"again"}]}`)
				var got openaiErrOut
				if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.StatusCode != 429 || got.Error.Type != "insufficient_quota" ||
					got.Error.Code == nil || *got.Error.Code != "insufficient_quota" || !strings.Contains(got.Error.Message, "quota") {
					t.Fatalf("stream %s: %d %s", stream, r.StatusCode, r.body)
				}
				// OpenAI's SDKs would otherwise sleep until the quota renews
				// (Retry-After) and send the request again.
				if r.Header.Get("X-Should-Retry") != "false" || r.Header.Get("Retry-After") == "" {
					t.Fatalf("stream %s: headers %v", stream, r.Header)
				}
			}
		})
	})
}

func TestRateLimitsApplyToTheOpenAIFace(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{KeyRate: 0.001, KeyBurst: 1}, func(t *testing.T, e *chatEnv) {
		e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
		e.complete(t, e.key, `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`)
		r := e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","messages":[{"role":"user","content":"again"}]}`)
		var got openaiErrOut
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.StatusCode != 429 || got.Error.Type != "requests" ||
			got.Error.Code == nil || *got.Error.Code != "rate_limit_exceeded" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%d %v %s", r.StatusCode, r.Header, r.body)
		}
		// A rate limit passes: the SDKs may retry after Retry-After.
		if r.Header.Get("X-Should-Retry") != "" {
			t.Fatalf("X-Should-Retry %q on a rate limit", r.Header.Get("X-Should-Retry"))
		}
	})
}

func TestModelsListsThePublishedBotsOfTheKeysTenant(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		op := platform.Operator()
		if _, _, err := e.svc.Bots().Create(t.Context(), op, "shop", "draft", []byte(chatBot(e.shop.URL))); err != nil {
			t.Fatal(err)
		}
		other := e.mustCreateTenant(t, "other")
		if _, _, err := e.svc.Bots().Create(t.Context(), op, "other", "theirs", []byte(chatBot(e.shop.URL))); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(t.Context(), op, "other", "theirs", 1); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			path, key string
			status    int
		}{
			{"/v1/models/helper", e.key, 200},
			{"/v1/models/theirs", other, 200},
			{"/v1/models/theirs", e.key, 404},
			{"/v1/models/draft", e.key, 409},
		} {
			r := e.raw(t, "GET", tc.path, tc.key, "")
			if r.StatusCode != tc.status || (tc.status == 200 && !strings.Contains(r.body, `"object":"model"`)) {
				t.Fatalf("GET %s: %d %s", tc.path, r.StatusCode, r.body)
			}
		}
		for key, want := range map[string]string{e.key: "helper", other: "theirs"} {
			r := e.raw(t, "GET", "/v1/models", key, "")
			var got struct {
				Object string `json:"object"`
				Data   []struct{ ID, Object string }
			}
			if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.StatusCode != 200 || got.Object != "list" ||
				len(got.Data) != 1 || got.Data[0].ID != want || got.Data[0].Object != "model" {
				t.Fatalf("models for the key of %s: %d %s", want, r.StatusCode, r.body)
			}
		}
	})
}

func TestATenantsKeyReachesNoOtherTenantsBotOrDialog(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		op := platform.Operator()
		other := e.mustCreateTenant(t, "other")
		theirs, _, err := e.svc.Bots().Create(t.Context(), op, "other", "theirs", []byte(chatBot(e.shop.URL)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(t.Context(), op, "other", "theirs", 1); err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{Text: "theirs"})
		_, r := e.complete(t, other, `{"model":"theirs","messages":[{"role":"user","content":"hi"}]}`)
		theirDialog := r.Header.Get("X-Parley-Dialog")
		// A second bot of the shop, to show a dialog header cannot cross bots either.
		if _, _, err := e.svc.Bots().Create(t.Context(), op, "shop", "second", []byte(chatBot(e.shop.URL))); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(t.Context(), op, "shop", "second", 1); err != nil {
			t.Fatal(err)
		}
		shopDialog := e.dialog(t) // of helper
		user := `"messages":[{"role":"user","content":"hi"}]`
		cases := []struct {
			name, body string
			headers    []string
		}{
			{"naming their bot by slug", `{"model":"theirs",` + user + `}`, nil},
			{"naming their bot by id", `{"model":"` + theirs.ID + `",` + user + `}`, nil},
			{"continuing their dialog", `{"model":"helper",` + user + `}`, []string{"X-Parley-Dialog", theirDialog}},
			{"continuing another bot's dialog", `{"model":"second",` + user + `}`, []string{"X-Parley-Dialog", shopDialog}},
		}
		before := len(e.llm.Requests())
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(t, "POST", "/v1/chat/completions", e.key, tc.body, tc.headers...)
				if r.StatusCode != http.StatusNotFound {
					t.Fatalf("%d %s", r.StatusCode, r.body)
				}
			})
		}
		if n := len(e.llm.Requests()) - before; n != 0 {
			t.Fatalf("the refused requests reached the model %d times", n)
		}
		mcp := e.raw(t, "POST", "/v1/tenants/other/bots/theirs/mcp", e.key, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
			"Accept", "application/json, text/event-stream")
		if mcp.StatusCode != http.StatusNotFound {
			t.Fatalf("MCP: another tenant's bot answered %d %s", mcp.StatusCode, mcp.body)
		}
	})
}

func TestAStreamHandsTheClientsToolCallsOver(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		e.llm.Enqueue(llmtest.ServerReply{Text: "Let me look.", ToolCalls: []llmtest.ServerCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}})
		r := e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","stream":true,"messages":[{"role":"user","content":"Oslo?"}],
			"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`)
		data := chunks(t, r.body)
		if r.StatusCode != 200 || data[len(data)-1] != "[DONE]" {
			t.Fatalf("%d %s", r.StatusCode, r.body)
		}
		var calls []map[string]any
		var finish string
		for _, d := range data[:len(data)-1] {
			var c struct {
				Choices []struct {
					Delta struct {
						ToolCalls []map[string]any `json:"tool_calls"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				t.Fatal(err)
			}
			for _, ch := range c.Choices {
				calls = append(calls, ch.Delta.ToolCalls...)
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		if len(calls) != 1 || calls[0]["id"] != "call_w" || calls[0]["index"] != float64(0) || finish != "tool_calls" {
			t.Fatalf("calls %v, finish %q", calls, finish)
		}
		fn := calls[0]["function"].(map[string]any)
		if fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Oslo"}` {
			t.Fatalf("function %v", fn)
		}
	})
}
