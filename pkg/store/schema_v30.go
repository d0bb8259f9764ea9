package store

import "gorm.io/gorm"

// migrateV30 lets a sitemap source own the url sources of its pages
// (knowledge_sources.parent_id, ” for a source of its own; deleting the
// sitemap deletes them), gives a source a warning that does not fail it
// (a sitemap capped at the tenant's limit), and adds that limit,
// knowledge_limits.max_sitemap_pages (NULL: the default).
func migrateV30(tx *gorm.DB) error {
	for _, stmt := range []string{
		"ALTER TABLE knowledge_sources ADD COLUMN parent_id VARCHAR(64) NOT NULL DEFAULT ''",
		"ALTER TABLE knowledge_sources ADD COLUMN warning TEXT NOT NULL DEFAULT ''",
		"CREATE INDEX ix_knowledge_sources_parent ON knowledge_sources (parent_id) WHERE parent_id <> ''",
		"ALTER TABLE knowledge_limits ADD COLUMN max_sitemap_pages BIGINT",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
