package platform

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"golang.org/x/oauth2"
)

// SingleSignOn is single sign-on through OpenID Connect providers: reach it with Service.SingleSignOn().
type SingleSignOn struct{ svc *Service }

// SingleSignOn returns single sign-on through OpenID Connect providers.
func (s *Service) SingleSignOn() SingleSignOn { return SingleSignOn{s} }

// OIDCProvider is an OpenID Connect provider Parley signs admin UI users in
// through: the operator's (PARLEY_OIDC_*) or a tenant's own (PUT /sso).
type OIDCProvider struct {
	Issuer       string
	ClientID     string
	ClientSecret string
}

// Configured reports whether the provider is set up.
func (o OIDCProvider) Configured() bool { return o.Issuer != "" && o.ClientID != "" }

// Bounds of single sign-on.
const (
	// OIDCLoginTTL is how long a sign-in may stay at the provider.
	OIDCLoginTTL = 10 * time.Minute
	// BreakGlassTTL is how long parley user break-glass lets an owner
	// use a password where the tenant requires single sign-on.
	BreakGlassTTL = time.Hour
	maxSSODomains = 50
	oidcTimeout   = 15 * time.Second
)

// ssoSealName is the name a tenant's client secret is sealed under; no
// tenant secret can have it (secret names are identifiers).
const ssoSealName = "sso:client_secret"

// SSOInput is PUT /sso: the tenant's provider, the role just-in-time
// members get ("" for none), the email domains admitted that way, and
// whether members must sign in through the provider. An empty
// ClientSecret keeps the one saved before.
type SSOInput struct {
	Issuer         string
	ClientID       string
	ClientSecret   string
	DefaultRole    string
	AllowedDomains []string
	RequireSSO     bool
}

// SSO is a tenant's single sign-on settings in their wire form: never
// the client secret, only whether there is one.
type SSO = apiclient.SSO

func ssoView(t *store.TenantSSO) SSO {
	out := SSO{Issuer: t.Issuer, ClientID: t.ClientID, HasSecret: len(t.Ciphertext) > 0, DefaultRole: t.DefaultRole,
		RequireSSO: t.RequireSSO, UpdatedAt: t.UpdatedAt, AllowedDomains: []string{}}
	_ = json.Unmarshal([]byte(t.AllowedDomains), &out.AllowedDomains)
	return out
}

// PutSSO replaces the tenant's single sign-on settings. The issuer is
// checked against the operator's outbound policy as it is saved; the
// client secret is sealed and never returned.
func (si SingleSignOn) PutSSO(ctx context.Context, p *Principal, tenant string, in SSOInput) (SSO, error) {
	s := si.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return SSO{}, err
	}
	in.Issuer = strings.TrimSpace(in.Issuer)
	var ps problems
	if u, err := url.Parse(in.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(in.Issuer) > maxIdentityURL {
		ps.add("/issuer", "must be the provider's http(s) issuer URL, of at most %d characters", maxIdentityURL)
	} else if err := outbound.CheckURL(ctx, s.SingleSignOn().outboundPolicy(), outbound.Options{}, in.Issuer); err != nil {
		ps.add("/issuer", "%s", err.Error())
	}
	if in.ClientID == "" || len(in.ClientID) > maxAudience {
		ps.add("/client_id", "is required, at most %d characters", maxAudience)
	}
	if len(in.ClientSecret) > MaxSecretSize {
		ps.add("/client_secret", "must be at most %d bytes", MaxSecretSize)
	}
	if in.DefaultRole != "" {
		if !slices.Contains(auth.Roles(), in.DefaultRole) {
			ps.add("/default_role", "must be one of %s, or empty for no just-in-time members", strings.Join(auth.Roles(), ", "))
		}
		if in.DefaultRole == auth.RoleOwner {
			ps.add("/default_role", "just-in-time members cannot be owners; choose admin or less")
		}
		if len(in.AllowedDomains) == 0 {
			ps.add("/allowed_domains", "name at least one email domain just-in-time membership admits")
		}
	}
	// Requiring SSO from a password session would shut its own user out
	// of the tenant at once, before anyone saw the provider work.
	if in.RequireSSO && p.Kind == KindSession && p.SessionVia != store.SessionSSO {
		ps.add("/require_sso", "sign in through the tenant's provider first (Sign in with SSO): a password session loses this tenant the moment single sign-on is required")
	}
	domains := make([]string, 0, len(in.AllowedDomains))
	for i, d := range in.AllowedDomains {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "" || strings.ContainsAny(d, "@/ ") || !strings.Contains(d, ".") {
			ps.add(fmt.Sprintf("/allowed_domains/%d", i), "must be an email domain such as example.com")
		}
		domains = append(domains, d)
	}
	if len(domains) > maxSSODomains {
		ps.add("/allowed_domains", "at most %d domains", maxSSODomains)
	}
	if err := ps.err(); err != nil {
		return SSO{}, err
	}
	row := store.TenantSSO{TenantID: t.ID, Issuer: strings.TrimRight(in.Issuer, "/"), ClientID: in.ClientID,
		DefaultRole: in.DefaultRole, RequireSSO: in.RequireSSO}
	domainsJSON, _ := json.Marshal(domains)
	row.AllowedDomains = string(domainsJSON)
	if in.ClientSecret != "" {
		if row.Nonce, row.Ciphertext, err = s.opts.Sealer.Seal(t.ID, ssoSealName, []byte(in.ClientSecret)); err != nil {
			return SSO{}, s.internal(ctx, "seal sso secret", err)
		}
	} else if old, err := s.store.Tenant(t.ID).SSO().Get(ctx); err == nil {
		row.Nonce, row.Ciphertext = old.Nonce, old.Ciphertext
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditSSOSet, detail: map[string]any{"issuer": row.Issuer, "client_id": row.ClientID,
			"default_role": row.DefaultRole, "allowed_domains": domains, "require_sso": row.RequireSSO,
			"secret_changed": in.ClientSecret != ""}}, tx.Tenant(t.ID).SSO().Put(ctx, &row)
	})
	if err != nil {
		return SSO{}, s.internal(ctx, "put sso", err)
	}
	return ssoView(&row), nil
}

// GetSSO returns the tenant's single sign-on settings.
func (si SingleSignOn) GetSSO(ctx context.Context, p *Principal, tenant string) (SSO, error) {
	s := si.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActRead)
	if err != nil {
		return SSO{}, err
	}
	row, err := s.store.Tenant(t.ID).SSO().Get(ctx)
	if err != nil {
		return SSO{}, s.storeErr(ctx, "get sso", "single sign-on settings", "", err)
	}
	return ssoView(&row), nil
}

// DeleteSSO removes the tenant's provider: members sign in with passwords
// (or the operator's provider) again.
func (si SingleSignOn) DeleteSSO(ctx context.Context, p *Principal, tenant string) error {
	s := si.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditSSODeleted}, tx.Tenant(t.ID).SSO().Delete(ctx)
	})
	return s.storeErr(ctx, "delete sso", "single sign-on settings", "", err)
}

// outboundPolicy is the operator's policy, or the default one that
// refuses private addresses.
func (si SingleSignOn) outboundPolicy() outbound.Policy {
	s := si.svc
	if s.opts.OutboundPolicy != nil {
		return *s.opts.OutboundPolicy
	}
	return outbound.Policy{}
}

// ssoTarget is the provider one sign-in goes to, with what it may grant.
type ssoTarget struct {
	tenantID string
	provider OIDCProvider
	// jitRole and domains admit new members of tenantID.
	jitRole string
	domains []string
}

func (si SingleSignOn) ssoTarget(ctx context.Context, tenantRef string) (ssoTarget, error) {
	s := si.svc
	if tenantRef == "" {
		if !s.opts.OIDC.Configured() {
			return ssoTarget{}, NotFound("single sign-on (the server has no PARLEY_OIDC_ISSUER; name a tenant with ?tenant=)")
		}
		return ssoTarget{provider: s.opts.OIDC}, nil
	}
	t, err := s.store.Tenants().Get(ctx, tenantRef)
	if err != nil {
		return ssoTarget{}, s.storeErr(ctx, "sso", "tenant", "", err)
	}
	return s.SingleSignOn().ssoTargetOf(ctx, t.ID)
}

func (si SingleSignOn) ssoTargetOf(ctx context.Context, tenantID string) (ssoTarget, error) {
	s := si.svc
	if tenantID == "" {
		return ssoTarget{provider: s.opts.OIDC}, nil
	}
	row, err := s.store.Tenant(tenantID).SSO().Get(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return ssoTarget{}, NotFound("single sign-on for this tenant")
	}
	if err != nil {
		return ssoTarget{}, s.internal(ctx, "sso settings", err)
	}
	v := ssoView(&row)
	tg := ssoTarget{tenantID: tenantID, provider: OIDCProvider{Issuer: row.Issuer, ClientID: row.ClientID},
		jitRole: row.DefaultRole, domains: v.AllowedDomains}
	if len(row.Ciphertext) > 0 {
		secret, err := s.opts.Sealer.Open(tenantID, ssoSealName, row.Nonce, row.Ciphertext)
		if err != nil {
			return ssoTarget{}, s.internal(ctx, "sso settings: open", errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?")))
		}
		tg.provider.ClientSecret = string(secret)
	}
	return tg, nil
}

// discover fetches the provider's discovery document through the outbound
// policy; its keys are fetched the same way when a token is verified.
func (si SingleSignOn) discover(ctx context.Context, tg ssoTarget, redirectURL string) (context.Context, *oidc.Provider, *oauth2.Config, error) {
	s := si.svc
	if err := outbound.CheckURL(ctx, s.SingleSignOn().outboundPolicy(), outbound.Options{}, tg.provider.Issuer); err != nil {
		return nil, nil, nil, Errorf(CodeForbidden, "the identity provider may not be reached: %s", err.Error())
	}
	ctx = oidc.ClientContext(ctx, outbound.NewClient(s.SingleSignOn().outboundPolicy(), outbound.Options{Timeout: oidcTimeout}))
	prov, err := oidc.NewProvider(ctx, tg.provider.Issuer)
	if err != nil {
		s.log.WarnContext(ctx, "platform: oidc discovery", "issuer", tg.provider.Issuer, "err", err)
		return nil, nil, nil, Errorf(CodeForbidden, "the identity provider at %s did not answer its discovery document; try again later or ask an admin to check the issuer", tg.provider.Issuer)
	}
	cfg := &oauth2.Config{ClientID: tg.provider.ClientID, ClientSecret: tg.provider.ClientSecret, Endpoint: prov.Endpoint(),
		RedirectURL: redirectURL, Scopes: []string{oidc.ScopeOpenID, "email"}}
	return ctx, prov, cfg, nil
}

// OIDCStart is a sign-in sent to a provider: the URL to send the browser
// to, and the state the browser must bring back (the caller binds it to
// the browser, in a cookie).
type OIDCStart struct {
	URL   string
	State string
}

// StartOIDCLogin begins a single sign-on through the tenant's provider
// (tenantRef "" for the operator's): the authorization code flow with
// PKCE, its state and nonce kept server-side for one use.
func (si SingleSignOn) StartOIDCLogin(ctx context.Context, tenantRef, redirectURL string) (OIDCStart, error) {
	s := si.svc
	tg, err := s.SingleSignOn().ssoTarget(ctx, tenantRef)
	if err != nil {
		return OIDCStart{}, err
	}
	_, _, cfg, err := s.SingleSignOn().discover(ctx, tg, redirectURL)
	if err != nil {
		return OIDCStart{}, err
	}
	state, nonce := randomString(), randomString()
	verifier := oauth2.GenerateVerifier()
	l := store.OIDCLogin{StateHash: auth.HashToken(state), TenantID: tg.tenantID, Nonce: nonce, Verifier: verifier,
		ExpiresAt: s.now().Add(OIDCLoginTTL)}
	if err := s.store.OIDCLogins().Create(ctx, &l); err != nil {
		return OIDCStart{}, s.internal(ctx, "start oidc login", err)
	}
	return OIDCStart{URL: cfg.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), State: state}, nil
}

// OIDCCallback is what the provider sends the browser back with, and the
// state the browser kept from StartOIDCLogin.
type OIDCCallback struct {
	State, Code, BrowserState string
	RedirectURL               string
	IP                        string
}

// FinishOIDCLogin completes a single sign-on: the state must be the
// browser's and unused, the code is exchanged with its PKCE verifier, the
// ID token verified (signature by the provider's keys, issuer, audience,
// expiry, nonce) and its verified email matched to a member, or to a new
// one when the tenant admits just-in-time members.
func (si SingleSignOn) FinishOIDCLogin(ctx context.Context, in OIDCCallback) (Session, error) {
	s := si.svc
	if in.State == "" || in.Code == "" {
		return Session{}, Errorf(CodeInvalid, "the provider sent no state or code back; start the sign-in again")
	}
	if in.BrowserState == "" || !auth.Equal(in.State, in.BrowserState) {
		return Session{}, unauthorized("this sign-in was not started in this browser (state mismatch); start it again from the sign-in page")
	}
	l, err := s.store.OIDCLogins().Take(ctx, auth.HashToken(in.State), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return Session{}, unauthorized("this sign-in was already used or has expired; start it again from the sign-in page")
	}
	if err != nil {
		return Session{}, s.internal(ctx, "finish oidc login", err)
	}
	tg, err := s.SingleSignOn().ssoTargetOf(ctx, l.TenantID)
	if err != nil {
		return Session{}, err
	}
	ctx, prov, cfg, err := s.SingleSignOn().discover(ctx, tg, in.RedirectURL)
	if err != nil {
		return Session{}, err
	}
	tok, err := cfg.Exchange(ctx, in.Code, oauth2.VerifierOption(l.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return Session{}, unauthorized("the identity provider refused the sign-in code: " + re.ErrorCode)
		}
		s.log.WarnContext(ctx, "platform: oidc code exchange", "issuer", tg.provider.Issuer, "err", err)
		return Session{}, unauthorized("the identity provider did not exchange the sign-in code; start again")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Session{}, unauthorized("the identity provider sent no ID token")
	}
	idt, err := prov.Verifier(&oidc.Config{ClientID: tg.provider.ClientID, Now: s.now}).Verify(ctx, raw)
	if err != nil {
		return Session{}, unauthorized(idTokenProblem(err))
	}
	if !auth.Equal(idt.Nonce, l.Nonce) {
		return Session{}, unauthorized("the ID token's nonce is not this sign-in's; start again")
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil || claims.Email == "" {
		return Session{}, unauthorized("the ID token carries no email; the provider must release the email scope")
	}
	if v := claims.EmailVerified; v != true && v != "true" {
		return Session{}, Errorf(CodeForbidden, "the identity provider has not verified the email address %s; verify it there first", claims.Email)
	}
	u, err := s.SingleSignOn().ssoUser(ctx, tg, claims.Email, in.IP)
	if err != nil {
		return Session{}, err
	}
	return s.Auth().startSessionVia(ctx, u, store.SessionSSO, tg.tenantID)
}

// idTokenProblem says in plain words why an ID token was refused; go-oidc's
// messages name claims and values, never a secret.
func idTokenProblem(err error) string {
	var expired *oidc.TokenExpiredError
	switch {
	case errors.As(err, &expired):
		return "the ID token has expired; sign in again"
	case strings.Contains(err.Error(), "audience"):
		return "the ID token was issued for another client (wrong audience): " + err.Error()
	case strings.Contains(err.Error(), "signature"):
		return "the ID token's signature does not verify with the provider's keys"
	case strings.Contains(err.Error(), "different provider"):
		return "the ID token was issued by another provider: " + err.Error()
	default:
		return "the ID token is not valid: " + err.Error()
	}
}

// ssoUser finds the member the provider vouched for. Through a tenant's
// provider, a user who is not a member joins with the default role when
// the tenant admits their email domain; through the operator's, only
// existing users sign in.
func (si SingleSignOn) ssoUser(ctx context.Context, tg ssoTarget, email, ip string) (*store.User, error) {
	s := si.svc
	u, err := s.store.Users().ByEmail(ctx, email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, s.internal(ctx, "sso user", err)
	}
	noAccount := Errorf(CodeForbidden, "%s is not a member here; ask an admin to invite you", email)
	if tg.tenantID == "" {
		if u == nil {
			return nil, noAccount
		}
		return u, nil
	}
	if u != nil {
		m, err := s.store.Tenant(tg.tenantID).Members().Get(ctx, u.ID)
		if err == nil && !m.Pending {
			return u, nil
		}
	}
	_, domain, _ := strings.Cut(strings.ToLower(email), "@")
	if tg.jitRole == "" || !slices.Contains(tg.domains, domain) {
		return nil, noAccount
	}
	p := &Principal{Kind: KindSession, Email: strings.ToLower(email), IP: ip}
	err = s.AuditLog().audited(ctx, p, tg.tenantID, func(tx *store.Store) (auditRecord, error) {
		if u == nil {
			u = &store.User{Email: email}
			if err := tx.Users().Create(ctx, u); err != nil {
				return auditRecord{}, err
			}
		}
		p.UserID = u.ID
		_, err := tx.Tenant(tg.tenantID).Members().Put(ctx, u.ID, tg.jitRole)
		return auditRecord{action: AuditMemberAdded, target: u.Email, detail: map[string]any{"role": tg.jitRole, "via": "sso"}}, err
	})
	if err != nil {
		return nil, s.internal(ctx, "sso: join", err)
	}
	return u, nil
}

// randomString is 32 random bytes, URL-safe: a state or a nonce.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// passwordAllowed decides whether a password may sign u in, and how the
// session is marked: tenants that require single sign-on are closed to
// password sessions (limitSessionRoles), so a user whose every tenant
// requires it is refused outright, unless an owner's break-glass window
// is open.
func (si SingleSignOn) passwordAllowed(ctx context.Context, u *store.User) (string, error) {
	s := si.svc
	if u.SSOBypassUntil != nil && u.SSOBypassUntil.After(s.now()) {
		return store.SessionBreakGlass, nil
	}
	ms, err := s.store.Users().Memberships(ctx, u.ID)
	if err != nil {
		return "", s.internal(ctx, "login: memberships", err)
	}
	var active []string
	for _, m := range ms {
		if !m.Pending {
			active = append(active, m.TenantID)
		}
	}
	if len(active) == 0 {
		return store.SessionPassword, nil
	}
	requiring, err := s.store.Users().RequiringSSO(ctx, active)
	if err != nil {
		return "", s.internal(ctx, "login: sso", err)
	}
	if len(requiring) == len(active) {
		return "", Errorf(CodeForbidden, "your organisation requires single sign-on: use \"Sign in with SSO\"")
	}
	return store.SessionPassword, nil
}

// limitSessionRoles drops the roles a session may not use: one begun
// through a tenant's provider acts in that tenant only (its provider
// vouches for nobody elsewhere), a password session acts in no tenant
// that requires single sign-on, and one without a second factor in none
// that requires two-factor.
func (si SingleSignOn) limitSessionRoles(ctx context.Context, sess *store.Session, roles map[string]string) error {
	s := si.svc
	if sess.TenantID != "" {
		for id := range roles {
			if id != sess.TenantID {
				delete(roles, id)
			}
		}
		return nil
	}
	if sess.Via == store.SessionSSO || sess.Via == store.SessionBreakGlass || len(roles) == 0 {
		return nil
	}
	requiring, err := s.store.Users().RequiringSSO(ctx, slices.Collect(maps.Keys(roles)))
	if err != nil {
		return s.internal(ctx, "authenticate session: sso", err)
	}
	for _, id := range requiring {
		delete(roles, id)
	}
	if sess.Via != store.SessionPassword {
		return nil
	}
	requiring, err = s.store.Users().RequiringTwoFactor(ctx, slices.Collect(maps.Keys(roles)))
	if err != nil {
		return s.internal(ctx, "authenticate session: two-factor", err)
	}
	for _, id := range requiring {
		delete(roles, id)
	}
	return nil
}

// BreakGlass lets a tenant's owner sign in with a password for
// BreakGlassTTL although the tenant requires single sign-on, for when its
// provider is down; only the operator may (parley user break-glass), and
// the tenant's audit log says so.
func (si SingleSignOn) BreakGlass(ctx context.Context, p *Principal, tenant, email string) (time.Time, error) {
	s := si.svc
	if err := requirePlatform(p); err != nil {
		return time.Time{}, err
	}
	t, err := s.store.Tenants().Get(ctx, tenant)
	if err != nil {
		return time.Time{}, s.storeErr(ctx, "break glass", "tenant", "", err)
	}
	u, err := s.store.Users().ByEmail(ctx, email)
	if err != nil {
		return time.Time{}, s.storeErr(ctx, "break glass", "user", "", err)
	}
	m, err := s.store.Tenant(t.ID).Members().Get(ctx, u.ID)
	if err != nil || m.Pending || m.Role != auth.RoleOwner {
		return time.Time{}, Errorf(CodeForbidden, "%s is not an owner of %s; break-glass is for owners", u.Email, t.Slug)
	}
	until := s.now().Add(BreakGlassTTL)
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditSSOBreakGlass, target: u.Email, detail: map[string]any{"until": until}},
			tx.Users().SetSSOBypass(ctx, u.ID, until)
	})
	if err != nil {
		return time.Time{}, s.internal(ctx, "break glass", err)
	}
	return until, nil
}
