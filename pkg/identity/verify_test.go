package identity_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/identity"
	"github.com/parleyhq/parley/pkg/outbound"
)

const (
	secret      = "tenant-one-identity-secret-0123456789abcdef"
	otherSecret = "tenant-two-identity-secret-0123456789abcdef"
	audience    = "shop.example"
)

// signed is what testdata/sign.mjs made with jose from npm.
type signed struct {
	JWKS   json.RawMessage   `json:"jwks"`
	Tokens map[string]string `json:"tokens"`
}

// mustSign runs testdata/sign.mjs; it skips when node or jose (installed
// by .ci/install-jose.sh, which CI insists on) is missing.
func mustSign(t *testing.T) signed {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found; the signed-token suites need node and jose (bash .ci/install-jose.sh)")
	}
	jose := filepath.Join(repoRoot(t), ".ci", "jose", "node_modules", "jose")
	if _, err := os.Stat(filepath.Join(jose, "package.json")); err != nil {
		t.Skip("jose is not installed; run bash .ci/install-jose.sh")
	}
	spec, _ := json.Marshal(map[string]string{"secret": secret, "other_secret": otherSecret, "aud": audience})
	out, err := exec.Command(node, filepath.Join("testdata", "sign.mjs"), string(spec), jose).Output()
	if err != nil {
		t.Fatalf("sign.mjs: %v", err)
	}
	var s signed
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("sign.mjs output: %v", err)
	}
	return s
}

func repoRoot(t *testing.T) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// jwksServer serves keys (replaceable) on loopback and returns the URL and
// an outbound client whose policy allows exactly that address.
type jwksServer struct {
	mu      sync.Mutex
	keys    json.RawMessage
	fetches int
}

func (j *jwksServer) set(keys json.RawMessage) {
	j.mu.Lock()
	j.keys = keys
	j.mu.Unlock()
}

func (j *jwksServer) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.fetches
}

func startJWKS(t *testing.T, keys json.RawMessage) (*jwksServer, string, *http.Client) {
	j := &jwksServer{keys: keys}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.fetches++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(j.keys)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{p})
	if err != nil {
		t.Fatal(err)
	}
	return j, srv.URL + "/.well-known/jwks.json", outbound.NewClient(policy, outbound.Options{})
}

// tamper changes the payload's sub, keeping the signature.
func tamper(t *testing.T, token string) string {
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(payload), `"user-1"`, `"user-2"`, 1)
	if changed == string(payload) {
		t.Fatal("sub not found in payload")
	}
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(changed))
	return strings.Join(parts, ".")
}

func TestVerifyJoseTokens(t *testing.T) {
	s := mustSign(t)
	_, jwksURL, client := startJWKS(t, s.JWKS)
	v := identity.NewVerifier(client, time.Now)
	hs := identity.Settings{Secret: []byte(secret), Audience: audience}
	hsNoAud := identity.Settings{Secret: []byte(secret)}
	jwks := identity.Settings{JWKSURL: jwksURL, Audience: audience}

	tests := []struct {
		name       string
		settings   identity.Settings
		token      string
		wantReason string // "" accepted
	}{
		{"an HS256 token signed with the tenant's secret is accepted", hs, s.Tokens["hs_ok"], ""},
		{"a token without aud is accepted when no audience is configured", hsNoAud, s.Tokens["hs_no_aud"], ""},
		{"an RS256 token whose kid is in the JWKS is accepted", jwks, s.Tokens["rs_ok"], ""},
		{"an ES256 token whose kid is in the JWKS is accepted", jwks, s.Tokens["es_ok"], ""},
		{"a token whose payload was changed is refused", hs, tamper(t, s.Tokens["hs_ok"]), identity.ReasonSignature},
		{"an RS256 token whose payload was changed is refused", jwks, tamper(t, s.Tokens["rs_ok"]), identity.ReasonSignature},
		{"an unsigned token (alg none) is refused", hs, s.Tokens["none"], identity.ReasonAlgorithm},
		{"an unsigned token (alg none) is refused by a JWKS tenant", jwks, s.Tokens["none"], identity.ReasonAlgorithm},
		{"an expired token is refused", hs, s.Tokens["hs_expired"], identity.ReasonExpired},
		{"a token without exp is refused", hs, s.Tokens["hs_no_exp"], identity.ReasonExpired},
		{"a token not valid yet (nbf) is refused", hs, s.Tokens["hs_not_yet_valid"], identity.ReasonNotYetValid},
		{"a token issued in the future is refused", hs, s.Tokens["hs_issued_in_future"], identity.ReasonNotYetValid},
		{"a token living a week is refused", hs, s.Tokens["hs_too_long"], identity.ReasonLifetime},
		{"a token for another audience is refused", hs, s.Tokens["hs_wrong_aud"], identity.ReasonAudience},
		{"a token without aud is refused when an audience is configured", hs, s.Tokens["hs_no_aud"], identity.ReasonAudience},
		{"a token signed with another tenant's secret is refused", hs, s.Tokens["hs_other_tenant"], identity.ReasonSignature},
		{"a token without sub is refused", hs, s.Tokens["hs_no_sub"], identity.ReasonSubject},
		{"an HS512 token is refused: only HS256 is configured", hs, s.Tokens["hs512"], identity.ReasonAlgorithm},
		{"alg confusion: HS256 signed with the JWKS public key is refused", jwks, s.Tokens["hs_with_public_key"], identity.ReasonAlgorithm},
		{"alg confusion: an RS256 token is refused by an HS256 tenant", hs, s.Tokens["rs_ok"], identity.ReasonAlgorithm},
		{"a token whose kid is not in the JWKS is refused", jwks, s.Tokens["rs_unknown_kid"], identity.ReasonUnknownKey},
		{"a token without kid is refused by a JWKS tenant", jwks, s.Tokens["rs_no_kid"], identity.ReasonUnknownKey},
		{"a token signed by a stranger under a known kid is refused", jwks, s.Tokens["rs_stranger_as_known_kid"], identity.ReasonSignature},
		{"an ES256 token naming the RSA key's kid is refused", jwks, s.Tokens["es_under_rsa_kid"], identity.ReasonSignature},
		{"a token is refused when the tenant has no identity settings", identity.Settings{}, s.Tokens["hs_ok"], identity.ReasonNotConfigured},
		{"garbage is refused", hs, "not.a.jwt", identity.ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user, err := v.Verify(context.Background(), tt.settings, tt.token)
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if user.ID != "user-1" || user.Claims["customer_id"] != "cus_42" {
					t.Fatalf("user = %+v", user)
				}
				return
			}
			var refused *identity.Error
			if !errors.As(err, &refused) {
				t.Fatalf("err = %v, want a refusal (%s)", err, tt.wantReason)
			}
			if refused.Reason != tt.wantReason {
				t.Fatalf("reason = %s (%s), want %s", refused.Reason, refused.Message, tt.wantReason)
			}
			if strings.Contains(refused.Message, tt.token) || strings.Contains(refused.Message, strings.Split(tt.token, ".")[0]+".") {
				t.Fatalf("message echoes the token: %s", refused.Message)
			}
		})
	}
}

func TestJWKSRefetchesUnknownKidAtMostEveryRefetchAfter(t *testing.T) {
	s := mustSign(t)
	var all struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(s.JWKS, &all); err != nil {
		t.Fatal(err)
	}
	onlyRSA, _ := json.Marshal(map[string]any{"keys": all.Keys[:1]})
	srv, url, client := startJWKS(t, onlyRSA)
	now := time.Now()
	v := identity.NewVerifier(client, func() time.Time { return now })
	settings := identity.Settings{JWKSURL: url, Audience: audience}
	verify := func(token string) error {
		_, err := v.Verify(context.Background(), settings, token)
		return err
	}

	if err := verify(s.Tokens["rs_ok"]); err != nil {
		t.Fatalf("rs_ok: %v", err)
	}
	if err := verify(s.Tokens["rs_ok"]); err != nil || srv.count() != 1 {
		t.Fatalf("second rs_ok: %v after %d fetches, want the cached keys", err, srv.count())
	}
	srv.set(s.JWKS) // the tenant publishes its new EC key
	if err := verify(s.Tokens["es_ok"]); err == nil {
		t.Fatal("es_ok accepted before the keys were refetched")
	}
	if srv.count() != 1 {
		t.Fatalf("%d fetches: an unknown kid refetched within RefetchAfter", srv.count())
	}
	now = now.Add(identity.RefetchAfter + time.Second)
	if err := verify(s.Tokens["es_ok"]); err != nil {
		t.Fatalf("es_ok after RefetchAfter: %v", err)
	}
	if srv.count() != 2 {
		t.Fatalf("%d fetches, want 2", srv.count())
	}
}

func TestJWKSIsFetchedThroughTheOutboundPolicy(t *testing.T) {
	s := mustSign(t)
	_, url, _ := startJWKS(t, s.JWKS)
	strict, err := outbound.ParsePolicy(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := identity.NewVerifier(outbound.NewClient(strict, outbound.Options{}), time.Now)
	_, err = v.Verify(context.Background(), identity.Settings{JWKSURL: url, Audience: audience}, s.Tokens["rs_ok"])
	var refused *identity.Error
	if !errors.As(err, &refused) || refused.Reason != identity.ReasonKeys {
		t.Fatalf("err = %v, want keys_unavailable: loopback is not an allowed destination", err)
	}
}
