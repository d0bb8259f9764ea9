package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// BenchmarkTurnStatements measures the two statements every turn runs most
// (reading a dialog's history and appending a message) written the three
// ways gorm allows: the builder, SQL text through gorm (Raw/Exec), and SQL
// text through database/sql as sql.go sends it. It is the evidence behind
// the rule in doc.go: SQL text runs through gorm except on the turn path,
// where this benchmark shows the direct way measurably faster.
//
//	go test ./pkg/store -run '^$' -bench TurnStatements -benchmem
//
// PostgreSQL runs too when PARLEY_TEST_DATABASE_URL is set.
func BenchmarkTurnStatements(b *testing.B) {
	ctx := context.Background()
	backends := []struct{ name, url string }{{"sqlite", ""}}
	if url := os.Getenv("PARLEY_TEST_DATABASE_URL"); url != "" {
		backends = append(backends, struct{ name, url string }{"postgres", url})
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := openBenchStore(b, be.url)
			tenant, dialog := seedBenchDialog(b, s, 40)
			me := s.Tenant(tenant).Messages()
			var history []Message

			b.Run("history/builder", func(b *testing.B) {
				for b.Loop() {
					history = history[:0]
					err := s.q(ctx).Where("tenant_id = ? AND dialog_id = ? AND seq > ?", tenant, dialog, 0).Order("seq").Find(&history).Error
					mustLen(b, len(history), err)
				}
			})
			b.Run("history/gorm-sql", func(b *testing.B) {
				for b.Loop() {
					history = history[:0]
					err := s.q(ctx).Raw(`SELECT `+messageColumns+` FROM messages WHERE tenant_id = ? AND dialog_id = ? AND seq > ? ORDER BY seq`,
						tenant, dialog, 0).Scan(&history).Error
					mustLen(b, len(history), err)
				}
			})
			b.Run("history/direct-sql", func(b *testing.B) {
				for b.Loop() {
					got, err := me.List(ctx, dialog, 0)
					mustLen(b, len(got), err)
				}
			})

			msg := func() *Message {
				return &Message{TenantID: tenant, DialogID: dialog, Kind: "user", Role: "user", Content: `"hello"`, Text: "hello", Status: MessageComplete, Meta: "{}"}
			}
			b.Run("append/builder", func(b *testing.B) {
				for b.Loop() {
					m := msg()
					s.fillMessage(m)
					err := s.q(ctx).Transaction(func(tx *gorm.DB) error {
						var seq int64
						if err := tx.Model(&Dialog{}).Where("tenant_id = ? AND id = ?", tenant, dialog).
							Updates(map[string]any{"last_seq": gorm.Expr("last_seq + 1"), "updated_at": time.Now().UTC()}).Error; err != nil {
							return err
						}
						if err := tx.Model(&Dialog{}).Select("last_seq").Where("tenant_id = ? AND id = ?", tenant, dialog).Scan(&seq).Error; err != nil {
							return err
						}
						m.Seq = seq
						return tx.Create(m).Error
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("append/gorm-sql", func(b *testing.B) {
				for b.Loop() {
					m := msg()
					s.fillMessage(m)
					err := s.q(ctx).Transaction(func(tx *gorm.DB) error {
						var seq int64
						if err := tx.Raw(`UPDATE dialogs SET last_seq = last_seq + 1, updated_at = ? WHERE tenant_id = ? AND id = ? RETURNING last_seq`,
							time.Now().UTC(), tenant, dialog).Scan(&seq).Error; err != nil {
							return err
						}
						m.Seq = seq
						return tx.Exec(`INSERT INTO messages (`+messageColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, messageArgs(m)...).Error
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("append/direct-sql", func(b *testing.B) {
				for b.Loop() {
					if err := me.Append(ctx, msg()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func mustLen(b *testing.B, n int, err error) {
	if err != nil || n < 40 {
		b.Fatalf("read %d messages: %v", n, err)
	}
}

// openBenchStore opens a migrated store: SQLite in a temporary directory,
// or a fresh schema of the PostgreSQL database at url.
func openBenchStore(b *testing.B, url string) *Store {
	ctx := context.Background()
	cfg := Config{DataDir: b.TempDir()}
	if url != "" {
		schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
		admin, err := Open(ctx, Config{DatabaseURL: url})
		if err != nil {
			b.Fatal(err)
		}
		if err := admin.db.Exec("CREATE SCHEMA " + schema).Error; err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			admin.db.Exec("DROP SCHEMA " + schema + " CASCADE")
			admin.Close()
		})
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		cfg = Config{DatabaseURL: url + sep + "search_path=" + schema}
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return s
}

// seedBenchDialog makes a tenant, a bot and a dialog holding n messages.
func seedBenchDialog(b *testing.B, s *Store, n int) (tenant, dialog string) {
	ctx := context.Background()
	tn := &Tenant{Slug: "bench", Name: "Bench"}
	if err := s.Tenants().Create(ctx, tn); err != nil {
		b.Fatal(err)
	}
	ts := s.Tenant(tn.ID)
	bot := &Bot{Slug: "support", Name: "Support"}
	if err := ts.Bots().Create(ctx, bot); err != nil {
		b.Fatal(err)
	}
	d := &Dialog{BotID: bot.ID, VersionNumber: 1, Status: DialogActive}
	if err := ts.Dialogs().Create(ctx, d); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		m := &Message{DialogID: d.ID, Kind: "user", Role: "user", Content: fmt.Sprintf(`"message %d"`, i),
			Text: fmt.Sprintf("message %d", i), Status: MessageComplete, Meta: "{}"}
		if err := ts.Messages().Append(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	return tn.ID, d.ID
}
