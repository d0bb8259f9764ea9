package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// turnPath are the files whose statements may go through sql.go's direct
// database/sql helpers (doc.go, "How the store speaks SQL").
var turnPath = map[string]bool{
	"sql.go": true, "statements.go": true, "leases.go": true, "leases_postgres.go": true,
	"messages.go": true, "dialogs.go": true, "idempotency.go": true, "usage.go": true,
	"dialog_signals.go": true,
}

// directSQL matches a call of sql.go's helpers: s.exec(ctx, ...) and the like.
var directSQL = regexp.MustCompile(`\.(exec|query|int64s|strings)\(ctx,`)

// The store speaks SQL through gorm everywhere but on the turn path, whose
// statements a benchmark shows faster sent directly: a new direct statement
// elsewhere is a second way to do what gorm does, and fails here.
func TestDirectSQLStaysOnTheTurnPath(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || turnPath[f] {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if directSQL.MatchString(line) {
				t.Errorf("%s:%d sends SQL directly off the turn path; use gorm's builder or Raw/Exec:\n\t%s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
