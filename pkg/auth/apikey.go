package auth

import (
	"fmt"
	"strings"
)

// Key kinds.
const (
	// KindSecret keys ("sk_") are for servers and carry scopes.
	KindSecret = "sk"
	// KindPublishable keys ("pk_") sit in web pages: they only chat, with one
	// bot, from allowed origins.
	KindPublishable = "pk"
)

// Key scopes.
const (
	// ScopeAdmin acts like the admin role.
	ScopeAdmin = "admin"
	// ScopeChat may only create dialogs and send messages.
	ScopeChat = "chat"
)

// prefixChars is how much of a key is shown in lists: the kind and the first
// four random characters, enough to tell keys apart, far too little to guess.
const prefixChars = len("sk_") + 4

// APIKey is a freshly generated key. Plaintext is shown to its owner once and
// never stored; the rest is what the store keeps.
type APIKey struct {
	Plaintext string
	Hash      string
	Prefix    string
	Last4     string
}

// GenerateAPIKey makes a new key of kind KindSecret or KindPublishable.
func GenerateAPIKey(kind string) (APIKey, error) {
	if kind != KindSecret && kind != KindPublishable {
		return APIKey{}, fmt.Errorf("auth: unknown key kind %q", kind)
	}
	r, err := randomBase62(tokenChars)
	if err != nil {
		return APIKey{}, fmt.Errorf("auth: generate key: %w", err)
	}
	plain := kind + "_" + r
	return APIKey{
		Plaintext: plain,
		Hash:      HashToken(plain),
		Prefix:    plain[:prefixChars],
		Last4:     plain[len(plain)-4:],
	}, nil
}

// KeyKind returns the kind of a presented key by its prefix, or "" when it
// does not look like an API key at all.
func KeyKind(token string) string {
	switch {
	case strings.HasPrefix(token, KindSecret+"_"):
		return KindSecret
	case strings.HasPrefix(token, KindPublishable+"_"):
		return KindPublishable
	default:
		return ""
	}
}

// SessionPrefix marks admin UI session tokens, so Authenticate can tell them
// from keys without a database lookup.
const SessionPrefix = "ses_"

// NewSessionToken returns a session token and its hash for the store.
func NewSessionToken() (token, hash string, err error) { return newToken(SessionPrefix) }

// newToken returns a random token starting with prefix, and its hash.
func newToken(prefix string) (token, hash string, err error) {
	r, err := randomBase62(tokenChars + 5)
	if err != nil {
		return "", "", fmt.Errorf("auth: generate %s token: %w", prefix, err)
	}
	token = prefix + r
	return token, HashToken(token), nil
}

// InvitePrefix marks one-time invite tokens.
const InvitePrefix = "inv_"

// NewInviteToken returns a one-time invite token and its hash for the
// store.
func NewInviteToken() (token, hash string, err error) { return newToken(InvitePrefix) }
