package platform

// channelConfig is the JSON a channel row keeps its kind's settings in:
// saved state, not a view, so it keeps its tags.
type channelConfig struct {
	Secrets   map[string]string `json:"secrets,omitempty"`
	BotUserID string            `json:"bot_user_id,omitempty"`
}
