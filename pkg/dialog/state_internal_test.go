package dialog

import (
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
)

// TestStoredMessageRoundTrip checks that what the loop keeps besides a
// message's blocks survives the row, now that an empty meta skips JSON.
func TestStoredMessageRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		m        agent.Message
		wantMeta string
	}{
		{"a user's text keeps an empty meta", agent.Message{Kind: agent.KindUser, Message: llm.UserText("hi")}, "{}"},
		{"a tool result keeps its timing and skip", agent.Message{Kind: agent.KindToolResult,
			Tool: &agent.ToolInfo{DurationMS: 12, Status: 200, Skipped: true}}, `{"tool":{"duration_ms":12,"status":200,"skipped":true}}`},
		{"a summary keeps how many messages it covers", agent.Message{Kind: agent.KindSummary, Covers: 7}, `{"covers":7}`},
		{"a steered text keeps its origin", agent.Message{Kind: agent.KindUser, Message: llm.UserText("stop"), Origin: "steer"}, `{"origin":"steer"}`},
	}
	d := &store.Dialog{ID: "dlg_1", TenantID: "ten_1", VersionNumber: 3}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.Time = at
			row, err := storeMessage(d, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if row.Meta != tc.wantMeta {
				t.Fatalf("meta %s, want %s", row.Meta, tc.wantMeta)
			}
			back, err := agentMessage(row)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Tool, tc.m.Tool) || back.Covers != tc.m.Covers || back.Origin != tc.m.Origin || back.Kind != tc.m.Kind {
				t.Fatalf("read back %+v, stored %+v", back, tc.m)
			}
		})
	}
}
