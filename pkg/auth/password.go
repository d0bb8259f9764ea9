package auth

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// ErrWrongPassword means the password does not match the hash.
var ErrWrongPassword = errors.New("auth: wrong password")

// PasswordHasher hashes passwords with bcrypt. The zero value uses
// bcrypt.DefaultCost; tests set Cost to bcrypt.MinCost for speed.
type PasswordHasher struct {
	Cost int
}

// Hash returns the bcrypt hash of password.
func (h PasswordHasher) Hash(password string) (string, error) {
	// The policy (CheckPassword) is the caller's to apply with the
	// account's email; these bounds keep a hash from ever being weaker.
	if utf8.RuneCountInString(password) < MinPasswordLength {
		return "", fmt.Errorf("auth: password must have at least %d characters", MinPasswordLength)
	}
	if len(password) > MaxPasswordBytes {
		// bcrypt ignores everything after 72 bytes; refuse rather than
		// silently accept a longer password that a prefix also matches.
		return "", fmt.Errorf("auth: password must have at most %d bytes", MaxPasswordBytes)
	}
	cost := h.Cost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	b, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("auth: hash password: %w", err)
	}
	return string(b), nil
}

// Verify returns nil when password matches hash and ErrWrongPassword when it
// does not. An empty hash (an invited user who has set no password yet)
// matches nothing.
func (h PasswordHasher) Verify(hash, password string) error {
	if hash == "" {
		h.DummyVerify(password)
		return ErrWrongPassword
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return ErrWrongPassword
	default:
		return fmt.Errorf("auth: verify password: %w", err)
	}
}

// DummyVerify spends the time of one Verify, so a login for an unknown email
// takes as long as one with a wrong password and does not reveal which
// emails exist.
func (h PasswordHasher) DummyVerify(password string) {
	cost := h.Cost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	// Hashing at the same cost does the same key-stretching work as a
	// comparison.
	_, _ = bcrypt.GenerateFromPassword([]byte(password), cost)
}
