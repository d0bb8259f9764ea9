package store

import "gorm.io/gorm"

// The table shape of migration step 27 (the content of knowledge
// sources), frozen like step 1.

// v27KnowledgeSourceContent is the raw document a source was added with
// (an uploaded file, a text, questions and answers as JSON), kept apart
// from the source row so listing sources never reads it, and kept after
// indexing so a retry or a reindex reads it again. A url or sitemap
// source has none: it is fetched.
type v27KnowledgeSourceContent struct {
	SourceID string             `gorm:"primaryKey;size:64"`
	Source   v25KnowledgeSource `gorm:"foreignKey:SourceID;constraint:OnDelete:CASCADE"`
	TenantID string             `gorm:"size:64;not null"`
	Tenant   v1Tenant           `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Content  []byte             `gorm:"not null"`
}

func (v27KnowledgeSourceContent) TableName() string { return "knowledge_source_contents" }

// migrateV27 creates the table of source contents.
func migrateV27(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v27KnowledgeSourceContent{})
}
