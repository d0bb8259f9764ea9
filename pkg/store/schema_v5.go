package store

import "gorm.io/gorm"

// migrateV5 lets an Idempotency-Key claim be settled with its server:
// owner is the instance that claimed it (store.Instance, "" on SQLite),
// so a claim of a dead instance is handed to the client's retry at once,
// and message_id is the id the request stores its user message under, so
// the retry of a request that died after storing it stores no second copy.
func migrateV5(tx *gorm.DB) error {
	for _, column := range []string{
		"ALTER TABLE idempotency_keys ADD COLUMN owner VARCHAR(128) NOT NULL DEFAULT ''",
		"ALTER TABLE idempotency_keys ADD COLUMN message_id VARCHAR(64) NOT NULL DEFAULT ''",
	} {
		if err := tx.Exec(column).Error; err != nil {
			return err
		}
	}
	return nil
}
