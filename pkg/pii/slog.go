package pii

import (
	"context"
	"log/slog"
)

type logKey struct{}

// WithLogMasking returns ctx whose log records (through a LogHandler) have
// what d finds masked; a nil d masks nothing.
func WithLogMasking(ctx context.Context, d *Detector) context.Context {
	if d == nil {
		return ctx
	}
	return context.WithValue(ctx, logKey{}, d)
}

// LogHandler masks personal data in the records logged with a context
// from WithLogMasking: the message and every string, error and
// Stringer attribute, in groups too, with Detector.Redact's fixed masks.
// Other records pass unchanged.
type LogHandler struct {
	next slog.Handler
}

// NewLogHandler wraps next.
func NewLogHandler(next slog.Handler) *LogHandler { return &LogHandler{next: next} }

// Enabled implements slog.Handler.
func (h *LogHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *LogHandler) Handle(ctx context.Context, r slog.Record) error {
	d, _ := ctx.Value(logKey{}).(*Detector)
	if d == nil {
		return h.next.Handle(ctx, r)
	}
	masked := slog.NewRecord(r.Time, r.Level, d.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		masked.AddAttrs(maskAttr(d, a))
		return true
	})
	return h.next.Handle(ctx, masked)
}

// WithAttrs implements slog.Handler. Attributes given to a Logger ahead
// of time are not masked: they are fixed before any dialog is known.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &LogHandler{next: h.next.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	return &LogHandler{next: h.next.WithGroup(name)}
}

func maskAttr(d *Detector, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, d.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		out := make([]any, len(group))
		for i, g := range group {
			out[i] = maskAttr(d, g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, d.Redact(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, d.Redact(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
