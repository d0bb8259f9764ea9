package channel

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Telegram's limits and header, from the Bot API documentation.
const (
	// TelegramMaxText is sendMessage's limit on a text, in characters.
	TelegramMaxText = 4096
	// TelegramSecretHeader carries the secret_token given to setWebhook
	// on every update Telegram sends.
	TelegramSecretHeader = "X-Telegram-Bot-Api-Secret-Token"
	// DefaultTelegramAPI is the public Bot API server.
	DefaultTelegramAPI = "https://api.telegram.org"
)

// NewTelegramSecret returns a random secret_token for setWebhook: 256
// bits in the 1-256 characters of A-Z, a-z, 0-9, _ and - Telegram allows.
func NewTelegramSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// VerifyTelegram reports whether an update carries the channel's secret
// token, compared in constant time.
func VerifyTelegram(h http.Header, secret string) bool {
	got := h.Get(TelegramSecretHeader)
	return secret != "" && subtle.ConstantTimeCompare([]byte(got), []byte(secret)) == 1
}

// telegramUpdate is the part of an Update this package reads.
type telegramUpdate struct {
	UpdateID int64 `json:"update_id"`
	Message  *struct {
		Text string `json:"text"`
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
		From *struct {
			ID    int64 `json:"id"`
			IsBot bool  `json:"is_bot"`
		} `json:"from"`
	} `json:"message"`
}

// ParseTelegram reads an Update. ok is false for updates that are not a
// person's text message (edits, photos, joins, other bots): Parley
// acknowledges and ignores them. err is set when the body is no Update.
func ParseTelegram(body []byte) (msg Message, ok bool, err error) {
	var u telegramUpdate
	if err := json.Unmarshal(body, &u); err != nil || u.UpdateID == 0 {
		return Message{}, false, errBadUpdate
	}
	m := u.Message
	if m == nil || strings.TrimSpace(m.Text) == "" || m.From == nil || m.From.IsBot {
		return Message{DeliveryID: strconv.FormatInt(u.UpdateID, 10)}, false, nil
	}
	return Message{DeliveryID: strconv.FormatInt(u.UpdateID, 10), Conversation: strconv.FormatInt(m.Chat.ID, 10),
		User: strconv.FormatInt(m.From.ID, 10), Text: m.Text}, true, nil
}

var errBadUpdate = apiErrorf("telegram", "update", "body is not a Telegram Update")

func apiErrorf(platform, method, desc string) *APIError {
	return &APIError{Platform: platform, Method: method, Status: http.StatusBadRequest, Description: desc}
}

// Telegram calls the Bot API.
type Telegram struct {
	// BaseURL is the Bot API server, DefaultTelegramAPI or a self-hosted one.
	BaseURL string
	Client  *http.Client
}

// telegramAnswer is every Bot API answer's envelope.
type telegramAnswer struct {
	OK          bool   `json:"ok"`
	Description string `json:"description"`
}

func (t Telegram) call(ctx context.Context, token, method string, body any) error {
	endpoint := strings.TrimRight(t.BaseURL, "/") + "/bot" + token + "/" + method
	var ans telegramAnswer
	status, err := postJSON(ctx, t.Client, "telegram", method, endpoint, nil, body, &ans)
	if err != nil {
		return err
	}
	if !ans.OK {
		return &APIError{Platform: "telegram", Method: method, Status: status, Description: ans.Description}
	}
	return nil
}

// SendMessage sends text to a chat, in as many messages of at most
// TelegramMaxText characters as it takes.
func (t Telegram) SendMessage(ctx context.Context, token, chatID, text string) error {
	for _, part := range Split(text, TelegramMaxText) {
		if err := t.call(ctx, token, "sendMessage", map[string]any{"chat_id": chatID, "text": part}); err != nil {
			return err
		}
	}
	return nil
}

// SetWebhook points the bot's updates at url, with secret as the
// secret_token Telegram then sends in TelegramSecretHeader.
func (t Telegram) SetWebhook(ctx context.Context, token, url, secret string) error {
	return t.call(ctx, token, "setWebhook", map[string]any{"url": url, "secret_token": secret,
		"allowed_updates": []string{"message"}})
}
