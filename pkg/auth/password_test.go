package auth_test

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/auth"
)

func TestPasswords(t *testing.T) {
	h := auth.PasswordHasher{Cost: bcrypt.MinCost}
	hash, err := h.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		password string
		want     error
	}{
		{"the right password verifies", "correct horse", nil},
		{"a wrong password is refused", "correct horsE", auth.ErrWrongPassword},
		{"an empty password is refused", "", auth.ErrWrongPassword},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := h.Verify(hash, tc.password); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("the hash does not contain the password", func(t *testing.T) {
		if strings.Contains(hash, "correct horse") {
			t.Fatal(hash)
		}
	})
	refused := []struct{ name, password string }{
		{"a password shorter than 12 characters is refused", "elevenchars"},
		{"a password longer than bcrypt's 72 bytes is refused", strings.Repeat("a", 73)},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := h.Hash(tc.password); err == nil {
				t.Fatalf("Hash(%d chars) succeeded", len(tc.password))
			}
		})
	}
}

func TestCheckPassword(t *testing.T) {
	cases := []struct {
		name, password, email string
		refused               bool
	}{
		{"a long uncommon password is accepted", "plum tractor velvet", "ada@example.com", false},
		{"eleven characters are too few", "abcdefghijk", "", true},
		{"twelve characters are enough", "vq7-lamp-oak", "", false},
		{"more than 72 bytes are refused", strings.Repeat("ab", 37), "", true},
		{"one character repeated is refused", strings.Repeat("z", 20), "", true},
		{"a common password is refused whatever its case", "PassWord1234", "", true},
		{"the account's own email is refused", "ada.lovelace@example.com", "Ada.Lovelace@example.com", true},
		{"length counts characters, not bytes", "äöüäöüäöüäöü", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := auth.CheckPassword(tc.password, tc.email)
			if (msg != "") != tc.refused {
				t.Fatalf("CheckPassword(%q) = %q, want refused %v", tc.password, msg, tc.refused)
			}
		})
	}
}
