package store

import (
	"context"
	"testing"
)

// What a user wrote comes back as written, even when it reads like a date
// and a query computes it (a snippet, a substring): SQLite's driver must
// not turn such text into a time.
func TestComputedTextThatReadsLikeADateStaysText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.db.Exec(`CREATE TABLE notes (text TEXT)`).Error; err != nil {
		t.Fatal(err)
	}
	const said = "2026-11-25 10:30:00"
	if _, err := s.exec(ctx, `INSERT INTO notes (text) VALUES ($1)`, said+" please call me then"); err != nil {
		t.Fatal(err)
	}
	got, err := s.strings(ctx, `SELECT substr(text, 1, 19) FROM notes`)
	if err != nil || len(got) != 1 || got[0] != said {
		t.Fatalf("the first 19 characters read back as %q, %v; want %q", got, err, said)
	}
}
