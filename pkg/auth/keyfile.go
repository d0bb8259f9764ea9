package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ParseKey decodes a 32-byte secrets key written as hex (64 characters) or
// standard/URL base64, as PARLEY_SECRET_KEY holds it. Errors never echo the
// key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == hex.EncodedLen(KeySize) {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("auth: secrets key must be %d bytes as 64 hex characters or base64", KeySize)
}

// LoadOrCreateKeyFile reads the secrets key from path, or, when the file does
// not exist, generates a random key and writes it there (base64, mode 0600,
// never overwriting a file that appeared meanwhile). This gives the embedded
// default working encryption with no setup. The file must be kept: losing it
// makes every stored secret unreadable.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if err := checkKeyFileMode(path); err != nil {
			return nil, err
		}
		key, err := ParseKey(string(b))
		if err != nil {
			return nil, fmt.Errorf("auth: key file %s: %w", path, err)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("auth: read key file: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("auth: generate key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("auth: create key file dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateKeyFile(path) // another process won the race; use its key
	}
	if err != nil {
		return nil, fmt.Errorf("auth: create key file: %w", err)
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, fmt.Errorf("auth: write key file: %w", werr)
	}
	return key, nil
}

// checkKeyFileMode refuses a key file others can read: it would silently
// defeat encryption at rest.
func checkKeyFileMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("auth: key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("auth: key file %s is readable by others (mode %v); run chmod 600 on it", path, fi.Mode().Perm())
	}
	return nil
}
