package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sync/singleflight"
)

// Bounds of the JWKS cache: a tenant's URL cannot make the server hold or
// fetch without limit.
const (
	// KeysTTL is how long a fetched key set is used before it is fetched
	// again.
	KeysTTL = 10 * time.Minute
	// RefetchAfter is the least time between two fetches of one URL, also
	// when tokens name unknown key ids.
	RefetchAfter = 30 * time.Second
	// MaxKeySets is how many URLs' key sets are kept; the oldest goes.
	MaxKeySets = 1024
	// MaxKeysBody caps a JWKS document.
	MaxKeysBody = 64 << 10
	// MaxKeys caps the keys read from one document.
	MaxKeys      = 32
	fetchTimeout = 5 * time.Second
)

// keySet is one URL's keys by kid, as last fetched.
type keySet struct {
	keys    map[string]any
	fetched time.Time
	err     error // the last fetch's failure, returned until RefetchAfter
}

type jwksCache struct {
	client *http.Client
	now    func() time.Time
	mu     sync.Mutex
	sets   map[string]*keySet
	// fetching makes the tokens that find one URL's keys missing at once
	// wait for a single fetch.
	fetching singleflight.Group
}

func newJWKSCache(client *http.Client, now func() time.Time) *jwksCache {
	return &jwksCache{client: client, now: now, sets: map[string]*keySet{}}
}

// jwksKey returns the key function for tokens verified by url's keys.
func (v *Verifier) jwksKey(ctx context.Context, url string) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, refuse(ReasonUnknownKey, "the user token has no kid header; this tenant's keys come from a JWKS URL")
		}
		return v.jwks.key(ctx, url, kid)
	}
}

// key finds kid in url's keys, fetching them when they are missing, stale,
// or do not have kid (a rotated key), at most every RefetchAfter.
func (c *jwksCache) key(ctx context.Context, url, kid string) (any, error) {
	c.mu.Lock()
	set := c.sets[url]
	c.mu.Unlock()
	if set != nil {
		if k, ok := set.keys[kid]; ok && c.now().Sub(set.fetched) < KeysTTL {
			return k, nil
		}
		if c.now().Sub(set.fetched) < RefetchAfter {
			if set.err != nil {
				return nil, set.err
			}
			return nil, refuse(ReasonUnknownKey, "the user token's kid %q is not among the keys at this tenant's JWKS URL", kid)
		}
	}
	v, _, _ := c.fetching.Do(url, func() (any, error) {
		set := c.fetch(ctx, url)
		c.store(url, set)
		return set, nil
	})
	set = v.(*keySet)
	if set.err != nil {
		return nil, set.err
	}
	if k, ok := set.keys[kid]; ok {
		return k, nil
	}
	return nil, refuse(ReasonUnknownKey, "the user token's kid %q is not among the keys at this tenant's JWKS URL", kid)
}

func (c *jwksCache) store(url string, set *keySet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sets[url]; !ok && len(c.sets) >= MaxKeySets {
		oldest := ""
		for u, s := range c.sets {
			if oldest == "" || s.fetched.Before(c.sets[oldest].fetched) {
				oldest = u
			}
		}
		delete(c.sets, oldest)
	}
	c.sets[url] = set
}

// fetch reads url's key set. Its failure is kept as the set's err, worded
// for the tenant, without the URL's query.
func (c *jwksCache) fetch(ctx context.Context, url string) *keySet {
	set := &keySet{fetched: c.now(), keys: map[string]any{}}
	fail := func(format string, args ...any) *keySet {
		set.err = refuse(ReasonKeys, "this tenant's JWKS URL could not be used: "+format, args...)
		return set
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fail("not a valid URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fail("the request failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail("it answered HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxKeysBody+1))
	if err != nil || len(body) > MaxKeysBody {
		return fail("the document is unreadable or larger than %d bytes", MaxKeysBody)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return fail("the document is not a JWK set")
	}
	for _, k := range doc.Keys {
		if len(set.keys) >= MaxKeys {
			break
		}
		if pub, err := k.public(); err == nil && k.Kid != "" {
			set.keys[k.Kid] = pub
		}
	}
	return set
}

// jwk is one key of a JWK set (RFC 7517); only public signing keys are read.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func (k jwk) public() (any, error) {
	if k.Use != "" && k.Use != "sig" {
		return nil, fmt.Errorf("not a signing key")
	}
	switch k.Kty {
	case "RSA":
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, fmt.Errorf("bad RSA key")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA key shorter than 2048 bits")
		}
		return pub, nil
	case "EC":
		if k.Crv != "P-256" {
			return nil, fmt.Errorf("unsupported curve")
		}
		x, err1 := base64.RawURLEncoding.DecodeString(k.X)
		y, err2 := base64.RawURLEncoding.DecodeString(k.Y)
		if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return nil, fmt.Errorf("bad EC key")
		}
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	}
	return nil, fmt.Errorf("unsupported key type")
}
