package auth

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Password rules, after NIST SP 800-63B: a length floor rather than
// composition rules, a ceiling bcrypt can honour, and no password from the
// lists attackers try first.
const (
	// MinPasswordLength is the fewest characters a password may have.
	MinPasswordLength = 12
	// MaxPasswordBytes is bcrypt's limit: it ignores everything after 72
	// bytes, so a longer password would be matched by its prefix.
	MaxPasswordBytes = 72
)

//go:embed common_passwords.txt
var commonPasswordList string

// commonPasswords is the embedded list, lower-cased.
var commonPasswords = func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(commonPasswordList, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			m[strings.ToLower(line)] = true
		}
	}
	return m
}()

// CheckPassword says what is wrong with password as a new password ("" when
// nothing is): too short, too long, one character repeated, the account's
// email, or on the list of common passwords.
func CheckPassword(password, email string) string {
	n := utf8.RuneCountInString(password)
	lower := strings.ToLower(password)
	switch {
	case n < MinPasswordLength:
		return fmt.Sprintf("must have at least %d characters", MinPasswordLength)
	case len(password) > MaxPasswordBytes:
		return fmt.Sprintf("must have at most %d bytes", MaxPasswordBytes)
	case strings.Count(password, string([]rune(password)[:1])) == n:
		return "must not be one character repeated"
	case email != "" && lower == strings.ToLower(strings.TrimSpace(email)):
		return "must not be the account's email"
	case commonPasswords[lower]:
		return "is one of the most common passwords; choose another"
	}
	return ""
}
