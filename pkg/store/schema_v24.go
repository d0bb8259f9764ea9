package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 24 (durable channel answers and
// channel secret rotation), frozen like step 1.

// v24ChannelJob is work owed to a channel's platform: a person's message
// to answer (kind "answer", queued with the delivery record before the
// platform is acknowledged) or a text to send into a conversation (kind
// "send": a bot reply, an operator's message). A row lives while the work
// is pending; a worker claims it for a lease.
type v24ChannelJob struct {
	ID        string     `gorm:"primaryKey;size:64"`
	TenantID  string     `gorm:"size:64;not null"`
	Tenant    v1Tenant   `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	ChannelID string     `gorm:"size:64;not null"`
	Channel   v14Channel `gorm:"foreignKey:ChannelID;constraint:OnDelete:CASCADE"`
	Kind      string     `gorm:"size:16;not null"`
	// DeliveryID is the platform's delivery an answer job came with.
	DeliveryID   string `gorm:"size:255;not null;default:''"`
	Conversation string `gorm:"size:255;not null"`
	UserID       string `gorm:"size:255;not null;default:''"`
	// MessageID is the id the person's text is stored under, so an answer
	// retried after a crash never stores it twice.
	MessageID     string    `gorm:"size:64;not null;default:''"`
	DialogID      string    `gorm:"size:64;not null;default:''"`
	Text          string    `gorm:"type:text;not null"`
	Attempts      int       `gorm:"not null;default:0"`
	NextAttemptAt time.Time `gorm:"not null;index:ix_channel_jobs_due"`
	Claim         string    `gorm:"size:200;not null;default:''"`
	LastError     string    `gorm:"type:text;not null;default:''"`
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (v24ChannelJob) TableName() string { return "channel_jobs" }

// v24Channel adds the previous own secret of a channel, still accepted
// until PrevExpiresAt after a rotation.
type v24Channel struct {
	PrevNonce     []byte
	PrevCipher    []byte
	PrevExpiresAt *time.Time
}

func (v24Channel) TableName() string { return "channels" }

func migrateV24(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v24ChannelJob{}); err != nil {
		return err
	}
	for _, col := range []string{"PrevNonce", "PrevCipher", "PrevExpiresAt"} {
		if err := tx.Migrator().AddColumn(&v24Channel{}, col); err != nil {
			return err
		}
	}
	return nil
}
