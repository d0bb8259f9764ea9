package platform

import (
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
)

// PrincipalKind says how a caller authenticated.
type PrincipalKind string

// Principal kinds.
const (
	// KindPlatform is the operator, with PARLEY_PLATFORM_TOKEN or on the
	// command line: may do anything in any tenant.
	KindPlatform PrincipalKind = "platform"
	// KindKey is a tenant API key (sk_ or pk_).
	KindKey PrincipalKind = "key"
	// KindSession is a signed-in admin UI user.
	KindSession PrincipalKind = "session"
)

// Principal is who is calling, as Authenticate found out. Pass it to every
// method; the methods decide what it may do.
type Principal struct {
	Kind PrincipalKind
	// TenantID is the key's tenant (KindKey only).
	TenantID string
	// KeyID, KeyName, KeyKind ("sk"/"pk") and Scopes describe a key.
	KeyID   string
	KeyName string
	KeyKind string
	Scopes  []string
	// BotID and Origins bind a pk_ key to one bot and to the web origins the
	// widget may run on.
	BotID   string
	Origins []string
	// UserID, Email and Roles (tenant id -> role) describe a session's user.
	UserID string
	Email  string
	Roles  map[string]string
	// SessionVia is how a session began (store.SessionPassword, ...);
	// SessionID names it (store.Session.ID).
	SessionVia, SessionID string
	// IP is the address the request came from, for the audit log; the API
	// sets it.
	IP string
	// UserToken is the end user's signed token a pk_ caller presented
	// (the widget's X-Parley-User-Token): a dialog of a signed-in end user
	// answers a widget only with that user's token.
	UserToken string
}

// Operator returns the platform principal, for commands that act with the
// operator's authority (parley tenant create, parley apply).
func Operator() *Principal { return &Principal{Kind: KindPlatform} }

// IsPlatform reports whether p is the platform operator.
func (p *Principal) IsPlatform() bool { return p != nil && p.Kind == KindPlatform }

// subjects are the policy subjects p acts as in tenantID; none means p has
// no business in that tenant at all.
func (p *Principal) subjects(tenantID string) []string {
	switch p.Kind {
	case KindKey:
		if p.TenantID != tenantID {
			return nil
		}
		subs := make([]string, len(p.Scopes))
		for i, sc := range p.Scopes {
			subs[i] = auth.ScopeSubject(sc)
		}
		return subs
	case KindSession:
		if role, ok := p.Roles[tenantID]; ok {
			return []string{role}
		}
	}
	return nil
}

// ForBot returns a copy of p that chats only with the dialogs of one bot
// of its tenant, as a pk_ key does: a turn on another bot's dialog is then
// not_found. The API's OpenAI face narrows the caller to the bot its
// request names, so a dialog header cannot reach another bot's dialog.
func (p *Principal) ForBot(botID string) *Principal {
	q := *p
	q.BotID = botID
	return &q
}

// AllowsOrigin reports whether a browser request from origin may use p. Only
// pk_ keys are restricted; origins compare case-insensitively, exactly
// (scheme, host and port).
func (p *Principal) AllowsOrigin(origin string) bool {
	if p.KeyKind != auth.KindPublishable {
		return true
	}
	return slices.ContainsFunc(p.Origins, func(o string) bool { return strings.EqualFold(o, origin) })
}

// Actor names p in records such as a version's CreatedBy.
func (p *Principal) Actor() string {
	switch p.Kind {
	case KindKey:
		return p.KeyID
	case KindSession:
		return p.UserID
	default:
		return string(KindPlatform)
	}
}
