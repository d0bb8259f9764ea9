package store

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

func TestNumberPlaceholders(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                               "SELECT 1",
		"a = ? AND b = ?":                        "a = $1 AND b = $2",
		"?::timestamptz, ?":                      "$1::timestamptz, $2",
		"IN (?, ?) AND c = ? ORDER BY d LIMIT ?": "IN ($1, $2) AND c = $3 ORDER BY d LIMIT $4",
	} {
		if got := numberPlaceholders(in); got != want {
			t.Errorf("numberPlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEveryNumberedStatementGetsItsArguments: the lease and save
// statements are numbered once and their arguments built per call, in two
// places; a placeholder added to one and not the other must fail here,
// not on PostgreSQL.
func TestEveryNumberedStatementGetsItsArguments(t *testing.T) {
	s := &Store{db: &gorm.DB{Config: &gorm.Config{NowFunc: time.Now}}}
	check := func(t *testing.T, name, query string, args []any) {
		t.Helper()
		if strings.Contains(query, "?") {
			t.Fatalf("%s: a ? is left in the statement", name)
		}
		if n := highestPlaceholder(query); n != len(args) {
			t.Errorf("%s: %d placeholders, %d arguments", name, n, len(args))
		}
	}
	t.Run("lease", func(t *testing.T) {
		for _, bot := range []string{"", "bot_1"} {
			for _, take := range []Take{
				{},
				{First: &Message{}},
				{First: &Message{}, Reply: &Message{}},
				{Reply: &Message{}}, // a reply without a text stores nothing
			} {
				take.TenantID, take.DialogID, take.Owner, take.BotID, take.Now = "ten_1", "dlg_1", "owner", bot, time.Now()
				k := leaseKindOf(take)
				query, ok := leaseStatements[k]
				if !ok {
					t.Fatalf("no statement for %+v", k)
				}
				check(t, "lease "+strconv.Quote(bot)+" "+strconv.FormatBool(k.first)+" "+strconv.FormatBool(k.reply), query, s.leaseArgs(take))
			}
		}
	})
	t.Run("save", func(t *testing.T) {
		for _, release := range []bool{false, true} {
			for _, reply := range []string{"", "msg_1"} {
				sv := Save{TenantID: "ten_1", DialogID: "dlg_1", Owner: "owner", Release: release, ReplyID: reply}
				query := saveStatements[saveKind{release: release, reply: reply != ""}]
				check(t, "save release="+strconv.FormatBool(release)+" reply="+reply, query, s.saveArgs(sv))
			}
		}
	})
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

// highestPlaceholder is the number of query's last $n placeholder.
func highestPlaceholder(query string) int {
	highest := 0
	for _, m := range placeholder.FindAllStringSubmatch(query, -1) {
		n, _ := strconv.Atoi(m[1])
		highest = max(highest, n)
	}
	return highest
}
