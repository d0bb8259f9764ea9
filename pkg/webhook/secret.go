package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
)

// SecretPrefix starts every endpoint secret, as Standard Webhooks writes them.
const SecretPrefix = "whsec_"

// Secret bounds: Standard Webhooks asks for 24 to 64 random bytes.
const (
	secretBytes    = 32
	minSecretBytes = 24
	maxSecretBytes = 64
)

// ErrBadSecret says a secret is not whsec_ followed by the base64 of 24 to
// 64 bytes. It never repeats the value.
var ErrBadSecret = errors.New("must be whsec_ followed by the base64 of 24 to 64 random bytes")

// NewSecret returns a fresh whsec_ secret of 256 random bits.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// SecretKey returns the HMAC key a whsec_ secret stands for.
func SecretKey(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrBadSecret
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return nil, ErrBadSecret
	}
	return key, nil
}
