package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math/big"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// tokenChars is the length of the random part of keys and session tokens:
// 27 base-62 characters carry 160 bits, above the 128 the design asks for.
const tokenChars = 27

// randomBase62 returns n characters drawn uniformly from the base-62
// alphabet (rand.Int avoids the modulo bias of byte%62).
func randomBase62(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(base62)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		b[i] = base62[v.Int64()]
	}
	return string(b), nil
}

// HashToken is the hex SHA-256 of a key or session token: what the database
// keeps and looks up. A fast hash is right here because the tokens carry
// 160 random bits; there is nothing to brute-force.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Equal compares two secrets in constant time, so a caller comparing a
// presented token with the expected one leaks nothing through timing.
func Equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
