package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
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
	return &Sealer{aead: aead}, nil
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
