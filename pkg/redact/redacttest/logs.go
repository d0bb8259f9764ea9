package redacttest

import (
	"bytes"
	"sync"
)

// Logs is a log sink a server's goroutines may write while the test reads
// it, to find what reached the logs (and what must not: a secret).
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything written so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
