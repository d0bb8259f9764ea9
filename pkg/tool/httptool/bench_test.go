package httptool

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/pkg/tool"
)

// Run: go test ./pkg/tool/httptool -run '^$' -bench . -benchmem
//
// The raw benchmarks send the same request to the same local server without
// the tool, so (tool - raw) is the tool's own overhead: rendering, headers,
// response reading, compaction and secret scrubbing.

const benchTool = `{"name": "save", "description": "d", "parameters": {"type": "object", "properties": {
	"order_id": {"type": "string"}, "email": {"type": "string"}, "seats": {"type": "integer"}}, "required": ["order_id"]},
	"endpoint": {"url": "{base}/orders/<order_id>", "method": "POST",
	"headers": {"Authorization": "Bearer {{secrets.crm_token}}"}, "query_params": {"src": "{{channel}}"},
	"body": {"email": "<email>", "seats": "<seats>", "dialogId": "todo_autofill_by_system"}}}`

const benchArgs = `{"order_id": "A-17/x", "email": "a@example.com", "seats": 3}`

func benchServer(b *testing.B) *apiServer {
	srv := newAPIServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "A-17", "status": "saved", "seats": 3, "email": "a@example.com"}`)
	})
	return srv
}

func BenchmarkRawClient(b *testing.B) {
	srv := benchServer(b)
	body := []byte(`{"email":"a@example.com","seats":3,"dialogId":"dlg_42"}`)
	url := srv.URL + "/orders/A-17%2Fx?src=widget"
	for _, bc := range []struct {
		name   string
		client *http.Client
	}{
		{"plain net/http client", &http.Client{Transport: &http.Transport{}}},
		{"outbound client", clientFor(b, srv)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytesReader(body))
				req.Header.Set("Authorization", "Bearer tok-S3CRET-crm-0001")
				req.Header.Set("Content-Type", "application/json")
				resp, err := bc.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		})
	}
}

func BenchmarkHTTPToolCall(b *testing.B) {
	srv := benchServer(b)
	spec := compileTool(b, srv.URL, benchTool, "")
	tl, err := New(spec, clientFor(b, srv), dialogVars, Options{})
	if err != nil {
		b.Fatal(err)
	}
	set, err := tool.NewSet(nil, tl)
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(benchArgs)
	b.Run("tool.Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := tl.Call(context.Background(), args); err != nil || res.IsError {
				b.Fatal(err, res.Content)
			}
		}
	})
	b.Run("Set.Call with validation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := set.Call(context.Background(), "save", args); res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
}
