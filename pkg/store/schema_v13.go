package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 13 (outbound webhooks), frozen like
// step 1.

type v13WebhookEndpoint struct {
	ID       string   `gorm:"primaryKey;size:64"`
	TenantID string   `gorm:"size:64;not null;index:ix_webhook_endpoints_tenant"`
	Tenant   v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	// Name is optional; parley apply names endpoints after their files.
	Name           string `gorm:"size:100;not null;default:''"`
	URL            string `gorm:"type:text;not null"`
	Events         string `gorm:"type:text;not null"`
	BotID          string `gorm:"size:64;not null;default:''"`
	Enabled        bool   `gorm:"not null;default:true"`
	DisabledReason string `gorm:"type:text;not null;default:''"`
	SecretNonce    []byte
	SecretCipher   []byte
	PrevNonce      []byte
	PrevCipher     []byte
	PrevExpiresAt  *time.Time
	FailingSince   *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (v13WebhookEndpoint) TableName() string { return "webhook_endpoints" }

type v13WebhookEvent struct {
	ID       string   `gorm:"primaryKey;size:64"`
	TenantID string   `gorm:"size:64;not null;index:ix_webhook_events_tenant"`
	Tenant   v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Type     string   `gorm:"size:64;not null"`
	// DedupeKey, when set, makes the event once per tenant (a quota reached
	// once a day, however many processes notice).
	DedupeKey string `gorm:"size:200;not null;default:''"`
	Body      string `gorm:"type:text;not null"`
	CreatedAt time.Time
}

func (v13WebhookEvent) TableName() string { return "webhook_events" }

type v13WebhookDelivery struct {
	ID         string             `gorm:"primaryKey;size:64"`
	TenantID   string             `gorm:"size:64;not null"`
	EndpointID string             `gorm:"size:64;not null;index:ix_webhook_deliveries_endpoint,priority:1;uniqueIndex:ux_webhook_deliveries_event_endpoint,priority:2"`
	Endpoint   v13WebhookEndpoint `gorm:"foreignKey:EndpointID;constraint:OnDelete:CASCADE"`
	EventID    string             `gorm:"size:64;not null;uniqueIndex:ux_webhook_deliveries_event_endpoint,priority:1"`
	Event      v13WebhookEvent    `gorm:"foreignKey:EventID;constraint:OnDelete:CASCADE"`
	Status     string             `gorm:"size:16;not null"`
	Attempts   int                `gorm:"not null;default:0"`
	// NextAttemptAt is when the delivery is due; a claim pushes it past
	// the claim's lease, so a worker that dies leaves it due again.
	NextAttemptAt time.Time `gorm:"not null"`
	Claim         string    `gorm:"size:64;not null;default:''"`
	LastStatus    int       `gorm:"not null;default:0"`
	LastError     string    `gorm:"type:text;not null;default:''"`
	DeliveredAt   *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (v13WebhookDelivery) TableName() string { return "webhook_deliveries" }

type v13WebhookAttempt struct {
	ID         string             `gorm:"primaryKey;size:64"`
	TenantID   string             `gorm:"size:64;not null"`
	DeliveryID string             `gorm:"size:64;not null;index:ix_webhook_attempts_delivery"`
	Delivery   v13WebhookDelivery `gorm:"foreignKey:DeliveryID;constraint:OnDelete:CASCADE"`
	Number     int                `gorm:"not null"`
	Status     int                `gorm:"not null;default:0"`
	DurationMS int64              `gorm:"not null;default:0"`
	Excerpt    string             `gorm:"type:text;not null;default:''"`
	Error      string             `gorm:"type:text;not null;default:''"`
	CreatedAt  time.Time
}

func (v13WebhookAttempt) TableName() string { return "webhook_attempts" }

// v13WebhookVersion is one row counting every change of any endpoint: a
// server process compares it to drop its cache of who subscribes to what.
type v13WebhookVersion struct {
	ID      int   `gorm:"primaryKey;autoIncrement:false"`
	Version int64 `gorm:"not null;default:0"`
}

func (v13WebhookVersion) TableName() string { return "webhook_endpoints_version" }

func migrateV13(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v13WebhookEndpoint{}, &v13WebhookEvent{}, &v13WebhookDelivery{},
		&v13WebhookAttempt{}, &v13WebhookVersion{}); err != nil {
		return err
	}
	for _, q := range []string{
		"CREATE UNIQUE INDEX ux_webhook_endpoints_name ON webhook_endpoints (tenant_id, name) WHERE name <> ''",
		"CREATE UNIQUE INDEX ux_webhook_events_dedupe ON webhook_events (tenant_id, dedupe_key) WHERE dedupe_key <> ''",
		// The worker's queue: only pending rows, by when they are due.
		"CREATE INDEX ix_webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
		"INSERT INTO webhook_endpoints_version (id, version) VALUES (1, 0)",
	} {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return nil
}
