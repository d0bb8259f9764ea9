package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 14 (inbound channels), frozen like
// step 1.

type v14Channel struct {
	ID       string   `gorm:"primaryKey;size:64"`
	TenantID string   `gorm:"size:64;not null;index:ix_channels_tenant"`
	Tenant   v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	BotID    string   `gorm:"size:64;not null"`
	Bot      v1Bot    `gorm:"foreignKey:BotID;constraint:OnDelete:CASCADE"`
	// Kind is webhook, telegram or slack; Name is optional (parley apply
	// names channels after their files).
	Kind    string `gorm:"size:16;not null"`
	Name    string `gorm:"size:100;not null;default:''"`
	Enabled bool   `gorm:"not null;default:true"`
	// Config is the kind's JSON settings: names of tenant secrets, never
	// their values.
	Config string `gorm:"type:text;not null;default:'{}'"`
	// The channel's own secret (a webhook channel's whsec_ signing secret,
	// a Telegram channel's secret token), sealed like tenant secrets.
	SecretNonce  []byte
	SecretCipher []byte
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (v14Channel) TableName() string { return "channels" }

// v14ChannelConversation maps a conversation of the channel's platform
// (a chat, a Slack thread, the tenant's own conversation id) to a dialog.
type v14ChannelConversation struct {
	ID         string     `gorm:"primaryKey;size:64"`
	TenantID   string     `gorm:"size:64;not null"`
	ChannelID  string     `gorm:"size:64;not null;uniqueIndex:ux_channel_conversations_external,priority:1"`
	Channel    v14Channel `gorm:"foreignKey:ChannelID;constraint:OnDelete:CASCADE"`
	ExternalID string     `gorm:"size:255;not null;uniqueIndex:ux_channel_conversations_external,priority:2"`
	UserID     string     `gorm:"size:255;not null;default:''"`
	DialogID   string     `gorm:"size:64;not null;index:ix_channel_conversations_dialog"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (v14ChannelConversation) TableName() string { return "channel_conversations" }

// v14ChannelDelivery remembers each delivery a platform made (a
// webhook-id, a Telegram update_id, a Slack event_id), so a retried one is
// never answered twice; Response keeps a synchronous answer to replay.
type v14ChannelDelivery struct {
	ChannelID  string     `gorm:"primaryKey;size:64"`
	Channel    v14Channel `gorm:"foreignKey:ChannelID;constraint:OnDelete:CASCADE"`
	DeliveryID string     `gorm:"primaryKey;size:255"`
	TenantID   string     `gorm:"size:64;not null"`
	Status     string     `gorm:"size:16;not null"`
	Response   string     `gorm:"type:text;not null;default:''"`
	CreatedAt  time.Time  `gorm:"index:ix_channel_deliveries_created"`
	UpdatedAt  time.Time
}

func (v14ChannelDelivery) TableName() string { return "channel_deliveries" }

func migrateV14(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v14Channel{}, &v14ChannelConversation{}, &v14ChannelDelivery{}); err != nil {
		return err
	}
	return tx.Exec("CREATE UNIQUE INDEX ux_channels_name ON channels (tenant_id, name) WHERE name <> ''").Error
}
