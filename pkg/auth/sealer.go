package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// KeySize is the length of the secrets key: AES-256.
const KeySize = 32

// ErrUnseal means a ciphertext could not be opened: wrong key, tampered data,
// or data sealed for another tenant or name.
var ErrUnseal = errors.New("auth: cannot open sealed secret")

// Sealer encrypts tenant secrets with AES-256-GCM. It is safe for concurrent
// use.
type Sealer struct {
	aead cipher.AEAD
	// digestKey keys Digest; derived from the secrets key so that it is
	// never the key that encrypts.
	digestKey []byte
}

// NewSealer returns a Sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("auth: secrets key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("auth: secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("auth: secrets key: %w", err)
	}
	digestKey, err := hkdf.Key(sha256.New, key, nil, "parley digest", sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("auth: secrets key: %w", err)
	}
	return &Sealer{aead: aead, digestKey: digestKey}, nil
}

// Digest returns the hex HMAC-SHA256 of purpose and parts under a key
// derived from the secrets key: a stable name for a value (an erased end
// user's id) that whoever holds the secrets key can match and nobody else
// can turn back into the value, however guessable it is.
func (s *Sealer) Digest(purpose string, parts ...string) string {
	m := hmac.New(sha256.New, s.digestKey)
	m.Write(lengthPrefixed(purpose))
	for _, p := range parts {
		m.Write(lengthPrefixed(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// lengthPrefixed frames s with its length, so that the parts ("ab", "c")
// and ("a", "bc") digest apart.
func lengthPrefixed(s string) []byte {
	return fmt.Appendf(nil, "%d:%s", len(s), s)
}

// Seal encrypts plaintext under a fresh random nonce. The tenant id and name
// are authenticated (not encrypted) with it, so a ciphertext copied to
// another tenant's row, or renamed, fails to open instead of leaking.
func (s *Sealer) Seal(tenantID, name string, plaintext []byte) (nonce, ciphertext []byte, err error) {
	nonce = make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("auth: seal: %w", err)
	}
	return nonce, s.aead.Seal(nil, nonce, plaintext, associatedData(tenantID, name)), nil
}

// Open decrypts what Seal produced for the same tenant and name.
func (s *Sealer) Open(tenantID, name string, nonce, ciphertext []byte) ([]byte, error) {
	if len(nonce) != s.aead.NonceSize() {
		return nil, ErrUnseal
	}
	plain, err := s.aead.Open(nil, nonce, ciphertext, associatedData(tenantID, name))
	if err != nil {
		return nil, ErrUnseal
	}
	return plain, nil
}

// associatedData joins tenant and name with their lengths so that
// ("ab", "c") and ("a", "bc") differ.
func associatedData(tenantID, name string) []byte {
	return fmt.Appendf(nil, "parley-secret:%d:%s:%d:%s", len(tenantID), tenantID, len(name), name)
}
