package auth_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/auth"
)

func newSealer(t *testing.T, fill byte) *auth.Sealer {
	t.Helper()
	s, err := auth.NewSealer(bytes.Repeat([]byte{fill}, auth.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealer(t *testing.T) {
	s := newSealer(t, 7)
	secret := []byte("crm-token-value")
	nonce, ct, err := s.Seal("ten_a", "crm", secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("what is sealed opens for the same tenant and name", func(t *testing.T) {
		got, err := s.Open("ten_a", "crm", nonce, ct)
		if err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("Open = %q, %v", got, err)
		}
	})
	t.Run("the ciphertext does not contain the plaintext", func(t *testing.T) {
		if bytes.Contains(ct, secret) {
			t.Fatal("plaintext visible")
		}
	})
	tampered := bytes.Clone(ct)
	tampered[0] ^= 1
	refusals := []struct {
		name           string
		sealer         *auth.Sealer
		tenant, secret string
		nonce, ct      []byte
	}{
		{"another tenant cannot open it", s, "ten_b", "crm", nonce, ct},
		{"another name cannot open it", s, "ten_a", "mail", nonce, ct},
		{"a shifted tenant/name boundary cannot open it", s, "ten_ac", "rm", nonce, ct},
		{"a tampered ciphertext does not open", s, "ten_a", "crm", nonce, tampered},
		{"a short nonce does not open", s, "ten_a", "crm", nonce[:4], ct},
		{"another key cannot open it", newSealer(t, 8), "ten_a", "crm", nonce, ct},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.sealer.Open(tc.tenant, tc.secret, tc.nonce, tc.ct); !errors.Is(err, auth.ErrUnseal) {
				t.Fatalf("Open = %v, want ErrUnseal", err)
			}
		})
	}
	t.Run("sealing twice uses fresh nonces", func(t *testing.T) {
		n2, ct2, _ := s.Seal("ten_a", "crm", secret)
		if bytes.Equal(n2, nonce) || bytes.Equal(ct2, ct) {
			t.Fatal("nonce reused")
		}
	})
	t.Run("a key of the wrong size is refused", func(t *testing.T) {
		if _, err := auth.NewSealer(make([]byte, 16)); err == nil {
			t.Fatal("16-byte key accepted")
		}
	})
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xab}, auth.KeySize)
	cases := []struct{ name, text string }{
		{"hex", hex.EncodeToString(key)},
		{"standard base64", base64.StdEncoding.EncodeToString(key)},
		{"unpadded URL base64", base64.RawURLEncoding.EncodeToString(key)},
		{"base64 with a trailing newline", base64.StdEncoding.EncodeToString(key) + "\n"},
	}
	for _, tc := range cases {
		t.Run("a key in "+tc.name+" parses", func(t *testing.T) {
			got, err := auth.ParseKey(tc.text)
			if err != nil || !bytes.Equal(got, key) {
				t.Fatalf("ParseKey = %x, %v", got, err)
			}
		})
	}
	short := base64.StdEncoding.EncodeToString(key[:16])
	t.Run("a 16-byte key is refused without echoing it", func(t *testing.T) {
		_, err := auth.ParseKey(short)
		if err == nil || strings.Contains(err.Error(), short) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	first, err := auth.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the new file is private to its owner", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v", fi.Mode().Perm(), err)
		}
	})
	t.Run("loading again returns the same key", func(t *testing.T) {
		again, err := auth.LoadOrCreateKeyFile(path)
		if err != nil || !bytes.Equal(again, first) || len(first) != auth.KeySize {
			t.Fatalf("got %x, %v; want %x", again, err, first)
		}
	})
	t.Run("a file others can read is refused", func(t *testing.T) {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := auth.LoadOrCreateKeyFile(path); err == nil {
			t.Fatal("world-readable key file accepted")
		}
	})
	t.Run("a file with garbage is refused", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.key")
		if err := os.WriteFile(bad, []byte("not a key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := auth.LoadOrCreateKeyFile(bad); err == nil {
			t.Fatal("garbage accepted")
		}
	})
}
