package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm/clause"
)

// Channels are a tenant's channels, their conversations, deliveries and
// jobs: reach them with Store.Tenant(id).Channels().
type Channels struct{ scope }

// InboundChannels finds a channel of any tenant by its id, for the public
// inbound route, which knows no tenant: Store.InboundChannels(). Cross-tenant.
type InboundChannels struct{ s *Store }

// PrefixChannel starts channel ids.
const PrefixChannel = "chn"

// prefixConversation starts channel conversation ids.
const prefixConversation = "cnv"

// Statuses of a channel delivery.
const (
	// ChannelDeliveryAnswering: the delivery was taken and is being answered.
	ChannelDeliveryAnswering = "answering"
	// ChannelDeliveryDone: it was answered (Response holds a synchronous answer).
	ChannelDeliveryDone = "done"
)

// Channel is a tenant's inbound channel: where a platform (the tenant's
// own backend, Telegram, Slack) sends user messages for one bot. Its
// secret is sealed by the caller.
type Channel struct {
	ID           string `gorm:"primaryKey"`
	TenantID     string
	BotID        string
	Kind         string
	Name         string
	Enabled      bool
	Config       string
	SecretNonce  []byte
	SecretCipher []byte
	// The previous secret is still accepted until PrevExpiresAt, after a
	// rotation.
	PrevNonce     []byte
	PrevCipher    []byte
	PrevExpiresAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ChannelConversation maps a platform's conversation to a dialog.
type ChannelConversation struct {
	ID         string `gorm:"primaryKey"`
	TenantID   string
	ChannelID  string
	ExternalID string
	UserID     string
	DialogID   string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ChannelDelivery is one delivery a platform made to a channel.
type ChannelDelivery struct {
	ChannelID  string `gorm:"primaryKey"`
	DeliveryID string `gorm:"primaryKey"`
	TenantID   string
	Status     string
	Response   string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Create inserts c, giving it an id. A name the tenant uses
// already is ErrConflict.
func (ch Channels) Create(ctx context.Context, c *Channel) error {
	s := ch.s
	c.TenantID = ch.tenant
	if c.ID == "" {
		c.ID = NewID(PrefixChannel)
	}
	return wrap("create channel", s.q(ctx).Create(c).Error)
}

// Get finds the tenant's channel by id or name.
func (ch Channels) Get(ctx context.Context, idOrName string) (*Channel, error) {
	s, tenantID := ch.s, ch.tenant
	var c Channel
	err := s.q(ctx).Where("tenant_id = ? AND (id = ? OR (name <> '' AND name = ?))", tenantID, idOrName, idOrName).First(&c).Error
	if err != nil {
		return nil, wrap("get channel", err)
	}
	return &c, nil
}

// ByID finds a channel by its id alone, for the public inbound
// route: the platform calling it knows nothing of tenants, and the
// channel's secret is what authenticates it.
func (i InboundChannels) ByID(ctx context.Context, id string) (*Channel, error) {
	s := i.s
	var c Channel
	if err := s.q(ctx).Where("id = ?", id).First(&c).Error; err != nil {
		return nil, wrap("get channel", err)
	}
	return &c, nil
}

// List returns all of the tenant's channels, oldest first.
func (ch Channels) List(ctx context.Context) ([]Channel, error) {
	s, tenantID := ch.s, ch.tenant
	var rows []Channel
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("id").Find(&rows).Error; err != nil {
		return nil, wrap("list channels", err)
	}
	return rows, nil
}

// Update sets fields (column: value) of the tenant's channel.
func (ch Channels) Update(ctx context.Context, id string, fields map[string]any) error {
	s, tenantID := ch.s, ch.tenant
	fields["updated_at"] = s.db.NowFunc()
	res := s.q(ctx).Model(&Channel{}).Where("tenant_id = ? AND id = ?", tenantID, id).Updates(fields)
	if res.Error != nil {
		return wrap("update channel", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("update channel", ErrNotFound)
	}
	return nil
}

// Delete removes the tenant's channel with its conversation map
// and delivery record (its dialogs stay).
func (ch Channels) Delete(ctx context.Context, id string) error {
	s, tenantID := ch.s, ch.tenant
	res := s.q(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).Delete(&Channel{})
	if res.Error != nil {
		return wrap("delete channel", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete channel", ErrNotFound)
	}
	return nil
}

// Conversation returns the dialog mapping of a platform
// conversation; none is ErrNotFound.
func (ch Channels) Conversation(ctx context.Context, channelID, externalID string) (*ChannelConversation, error) {
	s, tenantID := ch.s, ch.tenant
	var c ChannelConversation
	err := s.q(ctx).Where("tenant_id = ? AND channel_id = ? AND external_id = ?", tenantID, channelID, externalID).First(&c).Error
	if err != nil {
		return nil, wrap("get channel conversation", err)
	}
	return &c, nil
}

// ConversationOf returns the platform conversation a dialog answers;
// a dialog that came through no channel is ErrNotFound.
func (ch Channels) ConversationOf(ctx context.Context, dialogID string) (*ChannelConversation, error) {
	s, tenantID := ch.s, ch.tenant
	var c ChannelConversation
	err := s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", tenantID, dialogID).Order("id").First(&c).Error
	if err != nil {
		return nil, wrap("get conversation of dialog", err)
	}
	return &c, nil
}

// MapConversation points a platform conversation at a dialog: it
// creates the mapping, or moves it to dialogID when it pointed at
// replaced (a closed dialog). A mapping that changed meanwhile (another
// request created it first) is ErrConflict: read it again.
func (ch Channels) MapConversation(ctx context.Context, c *ChannelConversation, replaced string) error {
	s := ch.s
	c.TenantID = ch.tenant
	if replaced == "" {
		if c.ID == "" {
			c.ID = NewID(prefixConversation)
		}
		return wrap("map channel conversation", s.q(ctx).Create(c).Error)
	}
	res := s.q(ctx).Model(&ChannelConversation{}).
		Where("tenant_id = ? AND channel_id = ? AND external_id = ? AND dialog_id = ?", c.TenantID, c.ChannelID, c.ExternalID, replaced).
		Updates(map[string]any{"dialog_id": c.DialogID, "user_id": c.UserID, "updated_at": s.db.NowFunc()})
	if res.Error != nil {
		return wrap("map channel conversation", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("map channel conversation", ErrConflict)
	}
	return nil
}

// ClaimDelivery records that a platform's delivery is being
// answered. A delivery recorded already is not claimed again: claimed is
// false and the first record is returned, so a retry never answers twice.
func (ch Channels) ClaimDelivery(ctx context.Context, channelID, deliveryID string) (claimed bool, first *ChannelDelivery, err error) {
	s, tenantID := ch.s, ch.tenant
	return s.claimDelivery(ctx, ChannelDelivery{ChannelID: channelID, DeliveryID: deliveryID, TenantID: tenantID, Status: ChannelDeliveryAnswering})
}

// claimDelivery inserts d unless its delivery id is recorded already.
func (s *Store) claimDelivery(ctx context.Context, d ChannelDelivery) (claimed bool, first *ChannelDelivery, err error) {
	tenantID, channelID, deliveryID := d.TenantID, d.ChannelID, d.DeliveryID
	res := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&d)
	if res.Error != nil {
		return false, nil, wrap("claim channel delivery", res.Error)
	}
	if res.RowsAffected == 1 {
		return true, &d, nil
	}
	var got ChannelDelivery
	err = s.q(ctx).Where("tenant_id = ? AND channel_id = ? AND delivery_id = ?", tenantID, channelID, deliveryID).First(&got).Error
	if errors.Is(wrap("", err), ErrNotFound) {
		return false, nil, wrap("claim channel delivery", ErrConflict) // released meanwhile; the platform retries
	}
	if err != nil {
		return false, nil, wrap("claim channel delivery", err)
	}
	return false, &got, nil
}

// Delivery returns the record of a platform's delivery; none is
// ErrNotFound.
func (ch Channels) Delivery(ctx context.Context, channelID, deliveryID string) (*ChannelDelivery, error) {
	s, tenantID := ch.s, ch.tenant
	var d ChannelDelivery
	err := s.q(ctx).Where("tenant_id = ? AND channel_id = ? AND delivery_id = ?", tenantID, channelID, deliveryID).First(&d).Error
	if err != nil {
		return nil, wrap("get channel delivery", err)
	}
	return &d, nil
}

// FinishDelivery marks a claimed delivery answered, with the
// response to replay to a retry of it.
func (ch Channels) FinishDelivery(ctx context.Context, channelID, deliveryID, response string) error {
	s, tenantID := ch.s, ch.tenant
	err := s.q(ctx).Model(&ChannelDelivery{}).Where("tenant_id = ? AND channel_id = ? AND delivery_id = ?", tenantID, channelID, deliveryID).
		Updates(map[string]any{"status": ChannelDeliveryDone, "response": response, "updated_at": s.db.NowFunc()}).Error
	return wrap("finish channel delivery", err)
}

// ReleaseDelivery forgets a claimed delivery that could not be
// answered (refused before the user's text was stored), so the
// platform's retry may answer it.
func (ch Channels) ReleaseDelivery(ctx context.Context, channelID, deliveryID string) error {
	s, tenantID := ch.s, ch.tenant
	err := s.q(ctx).Where("tenant_id = ? AND channel_id = ? AND delivery_id = ? AND status = ?", tenantID, channelID, deliveryID, ChannelDeliveryAnswering).
		Delete(&ChannelDelivery{}).Error
	return wrap("release channel delivery", err)
}

// PruneDeliveries deletes delivery records older than before: the
// platforms stop retrying long before (Slack within minutes, Telegram and
// Standard Webhooks senders within a few days).
func (c ChannelJobs) PruneDeliveries(ctx context.Context, before time.Time) (int64, error) {
	s := c.s
	res := s.q(ctx).Where("created_at < ?", before).Delete(&ChannelDelivery{})
	return res.RowsAffected, wrap("prune channel deliveries", res.Error)
}
