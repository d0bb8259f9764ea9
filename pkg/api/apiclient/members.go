package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Member is a user's role in a tenant. Pending says the user was invited
// and has not set a password yet.
type Member struct {
	UserID  string `json:"user_id"`
	Email   string `json:"email"`
	Role    string `json:"role"`
	Pending bool   `json:"pending"`
}

// MemberList is the body of GET /v1/tenants/{tenant}/members.
type MemberList struct {
	Members []Member `json:"members"`
}

// InviteMemberRequest is the body of POST /v1/tenants/{tenant}/members.
type InviteMemberRequest struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// InvitePath is where the admin UI accepts an invite token: the token
// follows it, and the server's address comes before.
const InvitePath = "/admin/#/invite/"

// Invitation is a member just invited or added. For a user who has no
// password yet it carries a one-time invite token, shown this once, and the
// admin UI path that accepts it (InvitePath, to put after the server's
// address); both are empty when the user had a password and was simply
// added.
type Invitation struct {
	Member
	InviteToken string     `json:"invite_token,omitempty"`
	InvitePath  string     `json:"invite_path,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
}

// UpdateMemberRequest is the body of PATCH /v1/tenants/{tenant}/members/{user}.
type UpdateMemberRequest struct {
	Role string `json:"role"`
}

// AcceptInviteRequest is the body of POST /v1/auth/accept-invite: the
// invite token and the password the invited user chooses.
type AcceptInviteRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// AuditEntry is one entry of a tenant's audit log.
type AuditEntry struct {
	ID string `json:"id"`
	// Actor says who: kind "user" (ID is the user's id, Name the email),
	// "key" (the key's id and name) or "operator".
	Actor  AuditActor      `json:"actor"`
	Action string          `json:"action"`
	Target string          `json:"target,omitempty"`
	Detail json.RawMessage `json:"detail"`
	IP     string          `json:"ip,omitempty"`
	At     time.Time       `json:"at"`
}

// AuditActor is who made an audited change.
type AuditActor struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// AuditLog is one page of GET /v1/tenants/{tenant}/audit-log, newest first.
type AuditLog struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// AuditQuery filters the audit log; empty fields match everything.
type AuditQuery struct {
	Action, Actor string
	Since         time.Time
	Cursor        string
}

// ListMembers lists a tenant's members.
func (c *Client) ListMembers(ctx context.Context, tenant string) (*MemberList, error) {
	var out MemberList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "members"), nil, &out)
}

// InviteMember invites someone by email with a role.
func (c *Client) InviteMember(ctx context.Context, tenant, email, role string) (*Invitation, error) {
	var out Invitation
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "members"), InviteMemberRequest{Email: email, Role: role}, &out)
}

// SetMemberRole changes a member's role; user is the user id or email.
func (c *Client) SetMemberRole(ctx context.Context, tenant, user, role string) (*Member, error) {
	var out Member
	return &out, c.Do(ctx, http.MethodPatch, tenantPath(tenant, "members", user), UpdateMemberRequest{Role: role}, &out)
}

// RemoveMember takes a member out of the tenant.
func (c *Client) RemoveMember(ctx context.Context, tenant, user string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "members", user), nil, nil)
}

// AcceptInvite sets an invited user's password and signs them in (use a
// client with a cookie jar).
func (c *Client) AcceptInvite(ctx context.Context, token, password string) (*Me, error) {
	var out Me
	return &out, c.Do(ctx, http.MethodPost, "/v1/auth/accept-invite", AcceptInviteRequest{Token: token, Password: password}, &out)
}

// AuditLog reads one page of a tenant's audit log.
func (c *Client) AuditLog(ctx context.Context, tenant string, q AuditQuery) (*AuditLog, error) {
	v := url.Values{}
	for k, val := range map[string]string{"action": q.Action, "actor": q.Actor, "cursor": q.Cursor} {
		if val != "" {
			v.Set(k, val)
		}
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339))
	}
	path := tenantPath(tenant, "audit-log")
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out AuditLog
	return &out, c.Do(ctx, http.MethodGet, path, nil, &out)
}
