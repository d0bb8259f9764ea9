package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one versioned schema step. Steps are append-only: once
// released, a step's body never changes, because databases in the field
// have already run it. Each step therefore declares the table shapes it
// creates itself (see schema_v1.go) instead of using the live models.
type migration struct {
	version int
	name    string
	up      func(tx *gorm.DB) error
}

// migrations lists every step in order. Later issues add steps here (dialogs,
// messages, leases, usage) with the next version number.
var migrations = []migration{
	{1, "tenants, users, keys, secrets, sessions, bots, versions", migrateV1},
	{2, "dialogs, messages, tool calls, leases, idempotency keys, usage", migrateV2},
	{3, "messages and tool calls found by dialog only", migrateV3},
	{4, "streaming messages indexed", migrateV4},
	{5, "idempotency claims name their server and message", migrateV5},
	{6, "tenant identity settings for signed end-user tokens", migrateV6},
	{7, "tenant retention period", migrateV7},
	{8, "version tests, bots that require passing tests, canaries", migrateV8},
	{9, "dialogs say why they were closed", migrateV9},
	{10, "usage per provider", migrateV10},
	{11, "tenant model providers", migrateV11},
	{12, "per-tenant limits", migrateV12},
	{13, "outbound webhooks: endpoints, outbox, deliveries", migrateV13},
	{14, "inbound channels: channels, conversations, deliveries", migrateV14},
	{15, "memory notes about end users, across dialogs", migrateV15},
	{16, "webhook events name their dialog, so erasure finds them", migrateV16},
	{17, "webhook endpoints have a description", migrateV17},
	{18, "feedback, message search, chart indexes and counters", migrateV18},
	{19, "sub-run dialogs link to their parent dialog and call", migrateV19},
	{20, "member invites, pending memberships and the audit log", migrateV20},
	{21, "human handoff: who took which dialog, since when it waits", migrateV21},
	{22, "usage per hour, for hourly charts", migrateV22},
	{23, "tenant providers list the models they serve", migrateV23},
	{24, "durable channel answers and replies, channel secret rotation", migrateV24},
	{25, "knowledge bases: sources, chunks, embeddings, limits", migrateV25},
	{26, "feedback events name their dialog, so erasure finds them", migrateV26},
	{27, "publishable keys keep their value", migrateV27},
	{28, "the raw content of knowledge sources", migrateV28},
	{29, "usage meters embedding tokens", migrateV29},
	{30, "sitemap pages as sources of their sitemap, source warnings, a sitemap page limit", migrateV30},
	{31, "the personal data of a dialog behind its placeholders, sealed", migrateV31},
	{32, "dialog outcomes, ratings, labels and unanswered questions; tenant idle period", migrateV32},
	{33, "analytics rollups per tenant, bot, version, channel and hour", migrateV33},
	{34, "single sign-on: tenant providers, sign-ins under way, break-glass", migrateV34},
	{35, "autosaved config drafts, one per person and bot", migrateV35},
	{36, "operators' internal notes on dialogs, canned replies", migrateV36},
	{37, "analytics rollups time operators' first answers to handed-off dialogs", migrateV37},
	{38, "two-factor sign-in: authenticator secrets, recovery codes, sign-in challenges; tenants may require it", migrateV38},
	{39, "read marks of a dialog's two sides; handoff waiting times in the analytics rollups", migrateV39},
	{40, "until when a live stream follows a dialog", migrateV40},
}

// schemaMigration records an applied step.
type schemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// Migrate applies every step the database has not run yet, each in its own
// transaction together with its schema_migrations row, so a failed step
// leaves no half-applied schema and running Migrate again is a no-op.
func (s *Store) Migrate(ctx context.Context) error {
	applied, err := s.appliedSteps(ctx)
	if err != nil {
		return err
	}
	for _, m := range migrations {
		if applied[m.version] {
			continue
		}
		if err := s.applyOnce(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// SchemaVersion returns the highest applied step, 0 on an empty database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	if !s.q(ctx).Migrator().HasTable(&schemaMigration{}) {
		return 0, nil
	}
	var v int
	err := s.q(ctx).Model(&schemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&v).Error
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

// LatestSchemaVersion is the version Migrate brings a database to: what
// this build needs.
func LatestSchemaVersion() int { return migrations[len(migrations)-1].version }

// appliedSteps reads the steps already applied, without the lock: a step
// applied stays applied, and one not read here is checked again under the
// lock (applyOnce). So a server starting on an up-to-date database, as
// after a crash, runs two queries instead of a locked transaction per
// step, and never waits for the lock while other servers migrate.
func (s *Store) appliedSteps(ctx context.Context) (map[int]bool, error) {
	if !s.q(ctx).Migrator().HasTable(&schemaMigration{}) {
		return nil, nil
	}
	var versions []int
	if err := s.q(ctx).Model(&schemaMigration{}).Pluck("version", &versions).Error; err != nil {
		return nil, fmt.Errorf("store: migrate: read schema_migrations: %w", err)
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

func (s *Store) applyOnce(ctx context.Context, m migration) error {
	return s.q(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == DialectPostgres {
			// Serialise concurrent starters (several replicas booting at
			// once); the lock ends with the transaction.
			if err := tx.Exec("SELECT pg_advisory_xact_lock(7234001)").Error; err != nil {
				return fmt.Errorf("store: migrate: lock: %w", err)
			}
		}
		// Created under the lock, so two starters never race to create it.
		if err := tx.Migrator().AutoMigrate(&schemaMigration{}); err != nil {
			return fmt.Errorf("store: migrate: create schema_migrations: %w", err)
		}
		var n int64
		if err := tx.Model(&schemaMigration{}).Where("version = ?", m.version).Count(&n).Error; err != nil {
			return fmt.Errorf("store: migrate: read schema_migrations: %w", err)
		}
		if n > 0 {
			return nil
		}
		if err := m.up(tx); err != nil {
			return fmt.Errorf("store: migrate step %d (%s): %w", m.version, m.name, err)
		}
		rec := schemaMigration{Version: m.version, Name: m.name, AppliedAt: time.Now().UTC()}
		if err := tx.Create(&rec).Error; err != nil {
			return fmt.Errorf("store: migrate: record step %d: %w", m.version, err)
		}
		return nil
	})
}
