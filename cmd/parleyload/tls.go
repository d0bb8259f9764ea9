package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// fakeCert is a self-signed certificate for the fake LLM on loopback, so
// model calls can go over TLS and HTTP/2 as they do to api.openai.com,
// where many calls share one connection instead of holding one each.
type fakeCert struct {
	tls   tls.Certificate
	roots *x509.CertPool
	// File holds the certificate as PEM, for a server's SSL_CERT_FILE.
	File string
}

// newFakeCert creates the certificate and writes it to dir.
func newFakeCert(dir string) (*fakeCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("fake LLM certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "parleyload fake LLM"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
		// Its own issuer, so SSL_CERT_FILE can name it as the only root.
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("fake LLM certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("fake LLM certificate: %w", err)
	}
	file := filepath.Join(dir, "fake-llm.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, fmt.Errorf("fake LLM certificate: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return &fakeCert{tls: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots: roots, File: file}, nil
}

// serverConfig serves the certificate; net/http adds HTTP/2 to it.
func (c *fakeCert) serverConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.tls}, MinVersion: tls.VersionTLS12}
}

// trust makes hc's transport accept the certificate and speak HTTP/2,
// which a transport with its own TLS config does only when asked.
func (c *fakeCert) trust(hc *http.Client) *http.Client {
	tr := hc.Transport.(*http.Transport)
	tr.TLSClientConfig = &tls.Config{RootCAs: c.roots, MinVersion: tls.VersionTLS12}
	tr.ForceAttemptHTTP2 = true
	return hc
}
