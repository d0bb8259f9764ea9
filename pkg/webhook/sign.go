package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Tolerance is how far a timestamp may be from the verifier's clock, as
// the standard's libraries allow.
const Tolerance = 5 * time.Minute

// Signature returns "v1,<base64 HMAC-SHA256 of id.timestamp.body>" under
// key (SecretKey of the endpoint's secret).
func Signature(key []byte, id string, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Sign returns the three headers of one message, signed with every key:
// during a secret rotation's overlap both the new and the previous secret
// sign, space-separated, so receivers holding either verify it.
func Sign(id string, ts time.Time, body []byte, keys ...[]byte) http.Header {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = Signature(k, id, ts, body)
	}
	h := http.Header{}
	// Set through the map so the lower-case names the standard spells go
	// out as written (Go canonicalises them to Webhook-Id otherwise; HTTP
	// header names are case-insensitive either way).
	h[HeaderID] = []string{id}
	h[HeaderTimestamp] = []string{strconv.FormatInt(ts.Unix(), 10)}
	h[HeaderSignature] = []string{strings.Join(sigs, " ")}
	return h
}

// Errors of Verify.
var (
	ErrNoSignature  = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrBadTimestamp = errors.New("webhook: timestamp missing, malformed or outside the tolerance")
	ErrBadSignature = errors.New("webhook: no signature matches")
)

// Verify checks a received message as a receiver would: the timestamp
// within Tolerance of now, and one of the v1 signatures made with key.
func Verify(key []byte, h http.Header, body []byte, now time.Time) error {
	id, tsText, sigs := header(h, HeaderID), header(h, HeaderTimestamp), header(h, HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrNoSignature
	}
	sec, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	ts := time.Unix(sec, 0)
	if ts.Before(now.Add(-Tolerance)) || ts.After(now.Add(Tolerance)) {
		return ErrBadTimestamp
	}
	want := Signature(key, id, ts, body)
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return ErrBadSignature
}

// header reads a header whether it was set canonically or as written.
func header(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}
