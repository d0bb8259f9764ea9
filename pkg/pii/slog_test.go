package pii_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/pii"
)

func TestLogHandlerMasksRecordsLoggedWithAMaskingContext(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(pii.NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	d, _ := pii.New(pii.Kinds, nil)
	ctx := pii.WithLogMasking(context.Background(), d)
	log.ErrorContext(ctx, "tool failed for ann@example.com", "err", errors.New("card 4111111111111111 declined"),
		slog.Group("call", "args", `{"email":"ann@example.com"}`), "n", 3)
	masked := buf.String()
	for _, leak := range []string{"ann@example.com", "4111111111111111"} {
		if strings.Contains(masked, leak) {
			t.Fatalf("the log keeps %s: %s", leak, masked)
		}
	}
	if !strings.Contains(masked, "[email]") || !strings.Contains(masked, `"n":3`) {
		t.Fatalf("the log lost its shape: %s", masked)
	}
	buf.Reset()
	log.InfoContext(context.Background(), "plain ann@example.com")
	if !strings.Contains(buf.String(), "ann@example.com") {
		t.Fatalf("a record without a masking context was changed: %s", buf.String())
	}
}
