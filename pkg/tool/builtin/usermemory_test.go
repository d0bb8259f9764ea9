package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

// notes is a UserMemory in a map, holding at most max notes.
type notes struct {
	m   map[string]string
	max int
}

func (n *notes) Remember(_ context.Context, key, value string) error {
	if _, ok := n.m[key]; !ok && len(n.m) >= n.max {
		return builtin.ErrUserMemoryFull
	}
	n.m[key] = value
	return nil
}

func (n *notes) Forget(_ context.Context, key string) (bool, error) {
	_, ok := n.m[key]
	delete(n.m, key)
	return ok, nil
}

func TestTheMemoryToolsCheckWhatTheModelSaves(t *testing.T) {
	mem := &notes{m: map[string]string{}, max: 1}
	set, err := tool.NewSet(nil, builtin.UserMemoryTools(mem)...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args string
		wantErr          bool
		want             string
	}{
		{"a note is saved", botconfig.MemoryRememberTool, `{"key":"name","value":"Ann"}`, false, `Saved note "name"`},
		{"an empty key is refused", botconfig.MemoryRememberTool, `{"key":"","value":"x"}`, true, "key must be"},
		{"an empty value points to forget", botconfig.MemoryRememberTool, `{"key":"k","value":""}`, true, botconfig.MemoryForgetTool},
		{"an oversized value is refused", botconfig.MemoryRememberTool, `{"key":"k","value":"` + strings.Repeat("x", botconfig.MaxMemoryValueBytes+1) + `"}`, true, "keep notes under"},
		{"a new key in a full memory is refused", botconfig.MemoryRememberTool, `{"key":"city","value":"Oslo"}`, true, "memory is full"},
		{"an existing key in a full memory is replaced", botconfig.MemoryRememberTool, `{"key":"name","value":"Anna"}`, false, "Saved"},
		{"forgetting a note removes it", botconfig.MemoryForgetTool, `{"key":"name"}`, false, `Removed note "name"`},
		{"forgetting a missing note says so", botconfig.MemoryForgetTool, `{"key":"name"}`, false, "There was no note"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := set.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
			if res.IsError != tc.wantErr || !strings.Contains(res.Content, tc.want) {
				t.Fatalf("is_error %v, content %q; want %v and %q", res.IsError, res.Content, tc.wantErr, tc.want)
			}
		})
	}
}
