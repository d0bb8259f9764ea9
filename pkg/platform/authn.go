package platform

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Auth is who a caller is and what it may do: sign-in, sessions, keys and roles: reach it with Service.Auth().
type Auth struct{ svc *Service }

// Auth returns who a caller is and what it may do: sign-in, sessions, keys and roles.
func (s *Service) Auth() Auth { return Auth{s} }

// touchEvery limits last_used_at writes to one per key per minute, so a busy
// key does not turn every request into a database write.
const touchEvery = time.Minute

// Authenticate turns a bearer token into a Principal: the platform token, an
// sk_/pk_ API key, or an admin UI session token. Unknown, expired and
// revoked credentials are unauthorized, effective on the next request; in
// other processes sharing a PostgreSQL database, as soon as the
// revocation's notification reaches them (see store.KeyAuth.ByHash).
func (a Auth) Authenticate(ctx context.Context, token string) (*Principal, error) {
	s := a.svc
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		return nil, unauthorized("missing credentials")
	case s.opts.PlatformToken != "" && auth.Equal(token, s.opts.PlatformToken):
		return Operator(), nil
	case auth.KeyKind(token) != "":
		return s.Auth().authenticateKey(ctx, token)
	case strings.HasPrefix(token, auth.SessionPrefix):
		return s.Auth().authenticateSession(ctx, token)
	default:
		return nil, unauthorized("invalid credentials")
	}
}

func (a Auth) authenticateKey(ctx context.Context, token string) (*Principal, error) {
	s := a.svc
	k, err := s.store.KeyAuth().ByHash(ctx, auth.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, unauthorized("invalid API key")
	}
	if err != nil {
		return nil, s.internal(ctx, "authenticate key", err)
	}
	now := s.now()
	if !k.ActiveAt(now) {
		return nil, unauthorized("API key expired or revoked")
	}
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > touchEvery {
		if err := s.store.KeyAuth().Touch(ctx, k.ID, now); err != nil {
			s.log.WarnContext(ctx, "platform: record key use", "key_id", k.ID, "err", err)
		}
	}
	p := &Principal{Kind: KindKey, TenantID: k.TenantID, KeyID: k.ID, KeyName: k.Name, KeyKind: k.Kind,
		Scopes: k.Scopes, Origins: k.Origins}
	if k.BotID != nil {
		p.BotID = *k.BotID
	}
	return p, nil
}

func (a Auth) authenticateSession(ctx context.Context, token string) (*Principal, error) {
	s := a.svc
	sess, err := s.store.Sessions().Get(ctx, auth.HashToken(token), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, unauthorized("session expired; sign in again")
	}
	if err != nil {
		return nil, s.internal(ctx, "authenticate session", err)
	}
	u, err := s.store.Users().Get(ctx, sess.UserID)
	if err != nil {
		return nil, s.internal(ctx, "authenticate session: user", err)
	}
	ms, err := s.store.Users().Memberships(ctx, u.ID)
	if err != nil {
		return nil, s.internal(ctx, "authenticate session: memberships", err)
	}
	roles := make(map[string]string, len(ms))
	for _, m := range ms {
		if !m.Pending { // an invite not accepted grants nothing
			roles[m.TenantID] = m.Role
		}
	}
	if err := s.SingleSignOn().limitSessionRoles(ctx, sess, roles); err != nil {
		return nil, err
	}
	return &Principal{Kind: KindSession, UserID: u.ID, Email: u.Email, Roles: roles, SessionVia: sess.Via, SessionID: sess.ID()}, nil
}

// Session is a new admin UI sign-in. Token is shown once; the store keeps
// only its hash.
type Session struct {
	Token     string
	ExpiresAt time.Time
	User      User
}

// SignIn is the answer to a password: a session, or, for someone with
// two-factor on (or a tenant that requires it), the second step to take.
type SignIn struct {
	Session
	SecondStep *SecondStep
}

// Login checks an email and password and starts a session, or asks for a
// second factor (two_factor.go). A wrong email and a wrong password give
// the same answer in about the same time.
func (a Auth) Login(ctx context.Context, email, password string) (SignIn, error) {
	s := a.svc
	fail := unauthorized("wrong email or password")
	u, err := s.store.Users().ByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		s.opts.Passwords.DummyVerify(password)
		return SignIn{}, fail
	}
	if err != nil {
		return SignIn{}, s.internal(ctx, "login", err)
	}
	if err := s.opts.Passwords.Verify(u.PasswordHash, password); err != nil {
		if errors.Is(err, auth.ErrWrongPassword) {
			return SignIn{}, fail
		}
		return SignIn{}, s.internal(ctx, "login: verify", err)
	}
	via, err := s.SingleSignOn().passwordAllowed(ctx, u)
	if err != nil {
		return SignIn{}, err
	}
	return s.TwoFactor().afterPassword(ctx, u, via)
}

// startSession signs u in with a password.
func (a Auth) startSession(ctx context.Context, u *store.User) (Session, error) {
	s := a.svc
	return s.Auth().startSessionVia(ctx, u, store.SessionPassword, "")
}

// startSessionVia signs u in; via says how (store.SessionPassword, ...),
// tenantID limits the session to the one tenant whose provider vouched.
func (a Auth) startSessionVia(ctx context.Context, u *store.User, via, tenantID string) (Session, error) {
	s := a.svc
	token, hash, err := auth.NewSessionToken()
	if err != nil {
		return Session{}, s.internal(ctx, "login: token", err)
	}
	if err := s.store.Sessions().DeleteExpired(ctx, s.now()); err != nil {
		s.log.WarnContext(ctx, "platform: prune sessions", "err", err)
	}
	sess := store.Session{TokenHash: hash, UserID: u.ID, Via: via, TenantID: tenantID, ExpiresAt: s.now().Add(s.opts.SessionTTL)}
	if err := s.store.Sessions().Create(ctx, &sess); err != nil {
		return Session{}, s.internal(ctx, "login: session", err)
	}
	return Session{Token: token, ExpiresAt: sess.ExpiresAt, User: userView(u)}, nil
}

// Logout ends the session with this token. Ending an unknown or expired
// session succeeds, so logging out is always safe to retry.
func (a Auth) Logout(ctx context.Context, token string) error {
	s := a.svc
	if err := s.store.Sessions().Delete(ctx, auth.HashToken(token)); err != nil {
		return s.internal(ctx, "logout", err)
	}
	return nil
}

// Me describes the caller: who they are and what they can act on.
type Me struct {
	Kind PrincipalKind
	// User and Memberships are set for sessions.
	User        *User
	Memberships []Membership
	// Key is set for API keys.
	Key *APIKey
}

// Membership is one tenant a user belongs to, with the role there, in
// its wire form.
type Membership = apiclient.Membership

// Me returns what the admin UI shows about the signed-in caller.
func (a Auth) Me(ctx context.Context, p *Principal) (Me, error) {
	s := a.svc
	if p == nil {
		return Me{}, unauthorized("authentication required")
	}
	me := Me{Kind: p.Kind}
	switch p.Kind {
	case KindSession:
		u, err := s.store.Users().Get(ctx, p.UserID)
		if err != nil {
			return Me{}, s.storeErr(ctx, "me", "user", "", err)
		}
		uv := userView(u)
		me.User = &uv
		ms, err := s.store.Users().Memberships(ctx, u.ID)
		if err != nil {
			return Me{}, s.internal(ctx, "me: memberships", err)
		}
		for _, m := range ms {
			if _, ok := p.Roles[m.TenantID]; m.Pending || !ok { // ok: the session may act there (limitSessionRoles)
				continue
			}
			t, err := s.store.Tenants().Get(ctx, m.TenantID)
			if err != nil {
				return Me{}, s.internal(ctx, "me: tenant", err)
			}
			me.Memberships = append(me.Memberships, Membership{Tenant: tenantView(t), Role: m.Role})
		}
	case KindKey:
		k, err := s.store.Tenant(p.TenantID).Keys().Get(ctx, p.KeyID)
		if err != nil {
			return Me{}, s.storeErr(ctx, "me", "api key", "", err)
		}
		kv := keyView(k)
		me.Key = &kv
	}
	return me, nil
}
