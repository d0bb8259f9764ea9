package auth

import (
	"fmt"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	stringadapter "github.com/casbin/casbin/v2/persist/string-adapter"
	"github.com/casbin/casbin/v2/util"

	"github.com/parleyhq/parley/configs"
)

// Roles a user can have in a tenant, strongest first.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleEditor = "editor"
	// RoleOperator answers handed-off dialogs (the inbox) and reads what
	// a viewer reads, without authoring bots.
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// Roles returns the valid roles, strongest first.
func Roles() []string { return []string{RoleOwner, RoleAdmin, RoleEditor, RoleOperator, RoleViewer} }

// Objects permissions are about.
const (
	ObjTenant   = "tenant"
	ObjMembers  = "members"
	ObjKeys     = "keys"
	ObjSecrets  = "secrets"
	ObjBots     = "bots"
	ObjVersions = "versions"
	ObjDialogs  = "dialogs"
	ObjUsage    = "usage"
	ObjWebhooks = "webhooks"
	ObjChannels = "channels"
	// ObjAudit is the tenant's audit log.
	ObjAudit = "audit"
)

// Actions on objects.
const (
	ActRead    = "read"
	ActWrite   = "write"
	ActPublish = "publish"
	ActChat    = "chat"
	// ActErase deletes dialogs and erases end users (data rights);
	// ActExport reads all of a tenant's dialogs at once.
	ActErase  = "erase"
	ActExport = "export"
	// ActOperate is a person's work on handed-off dialogs: take one, reply
	// as themselves, give it back to the bot, close it.
	ActOperate = "operate"
)

// ScopeSubject is the policy subject of an API key scope, kept apart from
// role names so a scope and a role can never be confused.
func ScopeSubject(scope string) string { return "scope:" + scope }

// Authorizer answers permission questions from a casbin model and policy.
// It is immutable after construction and safe for concurrent use.
type Authorizer struct {
	// enforcer remembers its answers: every API request asks, and the
	// policy never changes after construction, so an answer never goes
	// stale. The answers are at most the questions the policy can be asked
	// (roles and scopes, objects, actions) per tenant.
	enforcer *casbin.SyncedCachedEnforcer
}

// NewAuthorizer returns an Authorizer for the model and policy embedded in
// configs/.
func NewAuthorizer() (*Authorizer, error) {
	return NewAuthorizerFrom(configs.RBACModel, configs.RBACPolicy)
}

// NewAuthorizerFrom returns an Authorizer for a casbin model and CSV policy
// given as text, for operators who customise the policy.
func NewAuthorizerFrom(modelText, policyCSV string) (*Authorizer, error) {
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		return nil, fmt.Errorf("auth: rbac model: %w", err)
	}
	e, err := casbin.NewSyncedCachedEnforcer(m, stringadapter.NewAdapter(policyCSV))
	if err != nil {
		return nil, fmt.Errorf("auth: rbac policy: %w", err)
	}
	// Role links are written for domain "*"; let them hold in every tenant.
	e.AddNamedDomainMatchingFunc("g", "keyMatch", util.KeyMatch)
	if err := e.BuildRoleLinks(); err != nil {
		return nil, fmt.Errorf("auth: rbac roles: %w", err)
	}
	return &Authorizer{enforcer: e}, nil
}

// Can reports whether subject (a role, or ScopeSubject of a key scope) may
// perform action on object in tenant. Anything the policy does not allow,
// including an evaluation error, is denied.
func (a *Authorizer) Can(subject, tenant, object, action string) bool {
	ok, err := a.enforcer.Enforce(subject, tenant, object, action)
	return err == nil && ok
}
