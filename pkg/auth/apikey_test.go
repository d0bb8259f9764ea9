package auth_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/auth"
)

func TestGenerateAPIKey(t *testing.T) {
	for _, kind := range []string{auth.KindSecret, auth.KindPublishable} {
		t.Run(kind+" keys carry their kind, 160 random bits and a matching hash", func(t *testing.T) {
			seen := map[string]bool{}
			for range 100 {
				k, err := auth.GenerateAPIKey(kind)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(k.Plaintext, kind+"_") || len(k.Plaintext) != len(kind)+1+27 {
					t.Fatalf("key %q has the wrong shape", k.Plaintext)
				}
				if auth.KeyKind(k.Plaintext) != kind {
					t.Fatalf("KeyKind(%q) = %q", k.Plaintext, auth.KeyKind(k.Plaintext))
				}
				if k.Hash != auth.HashToken(k.Plaintext) || len(k.Hash) != 64 {
					t.Fatalf("hash %q does not match the key", k.Hash)
				}
				if !strings.HasPrefix(k.Plaintext, k.Prefix) || !strings.HasSuffix(k.Plaintext, k.Last4) || len(k.Last4) != 4 {
					t.Fatalf("prefix %q / last4 %q do not come from %q", k.Prefix, k.Last4, k.Plaintext)
				}
				if strings.Contains(k.Hash, k.Plaintext) || len(k.Prefix)+len(k.Last4) >= len(k.Plaintext)/2 {
					t.Fatal("the stored parts reveal too much of the key")
				}
				if seen[k.Plaintext] {
					t.Fatal("a key repeated")
				}
				seen[k.Plaintext] = true
			}
		})
	}
	t.Run("an unknown kind is refused", func(t *testing.T) {
		if _, err := auth.GenerateAPIKey("xk"); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestKeyKind(t *testing.T) {
	cases := []struct{ name, token, want string }{
		{"an sk_ token is a secret key", "sk_abc", auth.KindSecret},
		{"a pk_ token is a publishable key", "pk_abc", auth.KindPublishable},
		{"a session token is not a key", "ses_abc", ""},
		{"a bare word is not a key", "skabc", ""},
		{"an empty token is not a key", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := auth.KeyKind(tc.token); got != tc.want {
				t.Fatalf("KeyKind(%q) = %q, want %q", tc.token, got, tc.want)
			}
		})
	}
}

func TestSessionTokens(t *testing.T) {
	a, ha, err := auth.NewSessionToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := auth.NewSessionToken()
	if a == b || !strings.HasPrefix(a, auth.SessionPrefix) || ha != auth.HashToken(a) {
		t.Fatalf("tokens %q %q hash %q", a, b, ha)
	}
}

func TestEqual(t *testing.T) {
	if !auth.Equal("secret-token", "secret-token") || auth.Equal("secret-token", "secret-tokem") || auth.Equal("", "x") {
		t.Fatal("Equal disagrees with ==")
	}
}
