package store

import "gorm.io/gorm"

// migrateV29 meters the tokens knowledge searches spend embedding their
// queries, apart from the model's input and output tokens: they are
// priced and billed apart by every provider.
func migrateV29(tx *gorm.DB) error {
	for _, stmt := range []string{
		"ALTER TABLE usage_daily ADD COLUMN embedding_tokens BIGINT NOT NULL DEFAULT 0",
		"ALTER TABLE usage_hourly ADD COLUMN embedding_tokens BIGINT NOT NULL DEFAULT 0",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
