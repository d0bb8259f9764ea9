package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// Roles ranked by what they may do in a tenant. Chat-only keys (sk chat,
// pk) rank below every role: they may use no route of this API yet.
const (
	rankChat = iota
	rankViewer
	rankOperator
	rankEditor
	rankAdmin
	rankOwner
)

// access is what a route requires.
type access struct {
	public   bool // no credential needed
	any      bool // any valid credential
	platform bool // the platform token only
	minRank  int  // otherwise: this role or better in the route's tenant
	// chat also lets chat-scoped keys in; a publishable key only with its
	// Origin, which these requests do not send.
	chat bool
	// serverKey is a route of the OpenAI or MCP face: only a tenant's sk_
	// key (any scope that may chat) gets in, everyone else 401. keyTenant
	// says the key alone names the tenant, so another tenant's key reaches
	// its own tenant (200) rather than alpha (404). reached is the status
	// of a caller let in when the request cannot complete: apiclient speaks
	// no MCP, so the SDK's transport answers.
	serverKey, keyTenant bool
	reached              int
	// person is a route of a person's own account: sessions get in, keys
	// and the operator are forbidden.
	person bool
	// signed is a route its platform's own signature opens, whatever
	// the caller's credential: this status answers the unsigned request.
	signed int
}

var (
	public       = access{public: true}
	anyValid     = access{any: true}
	platformOnly = access{platform: true}
)

func role(rank int) access { return access{minRank: rank} }

// face is a route of the OpenAI or MCP face.
func face(keyTenant bool, reached int) access {
	return access{serverKey: true, keyTenant: keyTenant, reached: reached}
}

// reaching is a route of this role or better whose request cannot
// complete here (it would call out): a caller let in gets status.
func reaching(rank, status int) access { return access{minRank: rank, reached: status} }

// chatOr is a dialog route: chat-scoped keys, or this role or better.
func chatOr(rank int) access { return access{minRank: rank, chat: true} }

// tenantFixture is one tenant's resources as routes name them.
type tenantFixture struct {
	slug, adminKey, botSlug, botID, keyID, secret string
}

// routeCase is one registered route with a request that succeeds for a
// caller who may use it.
type routeCase struct {
	method, path string
	need         access
	// request builds a concrete path and body against tenant f; it may
	// arrange fixtures first (a secret to delete, a key to revoke).
	request func(t *testing.T, w *world, f tenantFixture) (string, any)
}

func fixed(path string) func(*testing.T, *world, tenantFixture) (string, any) {
	return func(*testing.T, *world, tenantFixture) (string, any) { return path, nil }
}

// routeTable lists every route of the API. A route registered in
// routes.go but missing here fails TestEveryRouteIsInTheIsolationTable.
func routeTable() []routeCase {
	return []routeCase{
		{"GET", "/", public, fixed("/")},
		{"GET", "/healthz", public, fixed("/healthz")},
		{"GET", "/readyz", public, fixed("/readyz")},
		{"GET", "/metrics", public, fixed("/metrics")},
		{"GET", "/v1/schemas/agent-config", public, fixed("/v1/schemas/agent-config")},
		{"POST", "/v1/auth/login", public, func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/auth/login", apiclient.LoginRequest{Email: "owner@alpha.test", Password: "member-password"}
		}},
		{"POST", "/v1/auth/logout", public, fixed("/v1/auth/logout")},
		{"POST", "/v1/auth/accept-invite", public, func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/auth/accept-invite", apiclient.AcceptInviteRequest{Token: w.mustInvite(t, f).Token, Password: "a long new password"}
		}},
		{"GET", "/v1/auth/me", anyValid, fixed("/v1/auth/me")},
		{"GET", "/v1/auth/sessions", anyValid, fixed("/v1/auth/sessions")},
		// Nobody has a session with this id: every caller let in finds none.
		{"DELETE", "/v1/auth/sessions/:id", access{any: true, reached: http.StatusNotFound}, fixed("/v1/auth/sessions/0123456789abcdef")},
		// Two-factor is a person's: GET answers keys "off"; enrolment
		// with a made-up challenge is refused whoever asks; turning off
		// what is not on is 404 for a person, 403 for anyone else.
		{"GET", "/v1/auth/totp", anyValid, fixed("/v1/auth/totp")},
		{"POST", "/v1/auth/totp", access{public: true, reached: http.StatusUnauthorized}, func(*testing.T, *world, tenantFixture) (string, any) {
			return "/v1/auth/totp", apiclient.TOTPStartRequest{Challenge: "tfc_made-up"}
		}},
		{"POST", "/v1/auth/totp/confirm", access{public: true, reached: http.StatusUnauthorized}, func(*testing.T, *world, tenantFixture) (string, any) {
			return "/v1/auth/totp/confirm", apiclient.TOTPConfirmRequest{Challenge: "tfc_made-up", Code: "123456"}
		}},
		{"POST", "/v1/auth/totp/verify", access{public: true, reached: http.StatusUnauthorized}, func(*testing.T, *world, tenantFixture) (string, any) {
			return "/v1/auth/totp/verify", apiclient.TOTPVerifyRequest{Challenge: "tfc_made-up", Code: "123456"}
		}},
		{"DELETE", "/v1/auth/totp", access{person: true, reached: http.StatusNotFound}, func(*testing.T, *world, tenantFixture) (string, any) {
			return "/v1/auth/totp", apiclient.TOTPDisableRequest{Password: "member-password"}
		}},
		{"DELETE", "/v1/tenants/:tenant/members/:user/sessions", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/members/" + w.mustInvite(t, f).UserID + "/sessions", nil
		}},
		// No provider is set up here: the sign-in start finds none, the
		// callback without state or code is refused.
		{"GET", "/v1/auth/oidc/login", access{public: true, reached: http.StatusNotFound}, fixed("/v1/auth/oidc/login?tenant=alpha")},
		{"GET", "/v1/auth/oidc/callback", access{public: true, reached: http.StatusUnprocessableEntity}, fixed("/v1/auth/oidc/callback")},
		{"POST", "/v1/validate", anyValid, func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/validate", apiclient.ValidateRequest{Config: botConfig(t)}
		}},
		{"POST", "/v1/tenants", platformOnly, func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants", apiclient.CreateTenantRequest{Slug: w.unique("tenant"), Name: "New Tenant"}
		}},
		{"GET", "/v1/tenants", anyValid, fixed("/v1/tenants")},
		{"GET", "/v1/tenants/:tenant", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug, nil
		}},
		{"PATCH", "/v1/tenants/:tenant", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug, map[string]any{"retention_days": 30}
		}},
		{"POST", "/v1/tenants/:tenant/api-keys", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/api-keys", apiclient.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"chat"}}
		}},
		{"GET", "/v1/tenants/:tenant/api-keys", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/api-keys", nil
		}},
		{"PATCH", "/v1/tenants/:tenant/api-keys/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			k := w.mustKey(t, f.slug, platform.APIKeyInput{Name: "site", Kind: "pk", Bot: f.botSlug, Origins: []string{"https://shop.example"}})
			return "/v1/tenants/" + f.slug + "/api-keys/" + k.ID, apiclient.UpdateAPIKeyRequest{Origins: &[]string{"https://www.shop.example"}}
		}},
		{"DELETE", "/v1/tenants/:tenant/api-keys/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			k := w.mustKey(t, f.slug, platform.APIKeyInput{Name: "doomed", Scopes: []string{"chat"}})
			return "/v1/tenants/" + f.slug + "/api-keys/" + k.ID, nil
		}},
		{"PUT", "/v1/tenants/:tenant/secrets/:name", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/secrets/" + f.secret, apiclient.PutSecretRequest{Value: "s3cret-value"}
		}},
		{"GET", "/v1/tenants/:tenant/secrets", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/secrets", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/secrets/:name", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			name := strings.ReplaceAll(w.unique("doomed"), "-", "_")
			if _, err := w.svc.Secrets().Put(context.Background(), platform.Operator(), f.slug, name, "v"); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/secrets/" + name, nil
		}},
		{"GET", "/v1/tenants/:tenant/members", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/members", nil
		}},
		{"POST", "/v1/tenants/:tenant/members", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/members", apiclient.InviteMemberRequest{Email: w.unique("new") + "@example.com", Role: "viewer"}
		}},
		{"PATCH", "/v1/tenants/:tenant/members/:user", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/members/" + w.mustInvite(t, f).UserID, apiclient.UpdateMemberRequest{Role: "editor"}
		}},
		{"DELETE", "/v1/tenants/:tenant/members/:user", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/members/" + w.mustInvite(t, f).UserID, nil
		}},
		{"GET", "/v1/tenants/:tenant/audit-log", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/audit-log", nil
		}},
		{"PUT", "/v1/tenants/:tenant/identity", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/identity", apiclient.PutIdentityRequest{Secret: strings.Repeat("s", 40)}
		}},
		{"GET", "/v1/tenants/:tenant/identity", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			if _, err := w.svc.Identities().Put(context.Background(), platform.Operator(), f.slug, platform.IdentityInput{Secret: strings.Repeat("s", 40)}); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/identity", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/identity", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			if _, err := w.svc.Identities().Put(context.Background(), platform.Operator(), f.slug, platform.IdentityInput{Secret: strings.Repeat("s", 40)}); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/identity", nil
		}},
		{"PUT", "/v1/tenants/:tenant/sso", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/sso", apiclient.PutSSORequest{Issuer: "https://93.184.215.14", ClientID: "parley"}
		}},
		{"GET", "/v1/tenants/:tenant/sso", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			w.mustSSO(t, f.slug)
			return "/v1/tenants/" + f.slug + "/sso", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/sso", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			w.mustSSO(t, f.slug)
			return "/v1/tenants/" + f.slug + "/sso", nil
		}},
		{"PUT", "/v1/tenants/:tenant/providers/:name", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/providers/claude", apiclient.PutProviderRequest{Kind: "anthropic", APIKeySecret: f.secret}
		}},
		{"GET", "/v1/tenants/:tenant/providers", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/providers", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/providers/:name", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			name := w.unique("doomed")
			if _, err := w.svc.Providers().Put(context.Background(), platform.Operator(), f.slug, name,
				platform.ProviderSpec{Kind: "openai", APIKeySecret: f.secret}); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/providers/" + name, nil
		}},
		{"POST", "/v1/tenants/:tenant/webhooks", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks", apiclient.CreateWebhookRequest{URL: "https://hooks.example.com/in", Events: []string{"*"}}
		}},
		{"GET", "/v1/tenants/:tenant/webhooks", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks", nil
		}},
		{"GET", "/v1/tenants/:tenant/webhooks/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks/" + w.mustWebhook(t, f), nil
		}},
		{"PATCH", "/v1/tenants/:tenant/webhooks/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks/" + w.mustWebhook(t, f), map[string]any{"enabled": false}
		}},
		{"DELETE", "/v1/tenants/:tenant/webhooks/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks/" + w.mustWebhook(t, f), nil
		}},
		{"POST", "/v1/tenants/:tenant/webhooks/:id/rotate-secret", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks/" + w.mustWebhook(t, f) + "/rotate-secret", map[string]any{}
		}},
		{"POST", "/v1/tenants/:tenant/webhooks/:id/test", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks/" + w.mustWebhook(t, f) + "/test", nil
		}},
		{"GET", "/v1/tenants/:tenant/webhooks/:id/deliveries", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/webhooks/" + w.mustWebhook(t, f) + "/deliveries", nil
		}},
		{"POST", "/v1/tenants/:tenant/webhooks/:id/deliveries/:delivery/replay", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			id, delivery := w.mustWebhookDelivery(t, f)
			return "/v1/tenants/" + f.slug + "/webhooks/" + id + "/deliveries/" + delivery + "/replay", nil
		}},
		{"POST", "/v1/tenants/:tenant/channels", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels", apiclient.CreateChannelRequest{Kind: "webhook", Bot: f.botSlug}
		}},
		{"GET", "/v1/tenants/:tenant/channels", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels", nil
		}},
		{"GET", "/v1/tenants/:tenant/channels/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels/" + w.mustChannel(t, f), nil
		}},
		{"PATCH", "/v1/tenants/:tenant/channels/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels/" + w.mustChannel(t, f), map[string]any{"enabled": false}
		}},
		{"DELETE", "/v1/tenants/:tenant/channels/:id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels/" + w.mustChannel(t, f), nil
		}},
		// Telegram is not called from here: a webhook channel has no
		// webhook to set, which only a caller let in learns (422).
		{"POST", "/v1/tenants/:tenant/channels/:id/telegram/set-webhook", reaching(rankAdmin, http.StatusUnprocessableEntity), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels/" + w.mustChannel(t, f) + "/telegram/set-webhook", nil
		}},
		{"POST", "/v1/tenants/:tenant/channels/:id/rotate-secret", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/channels/" + w.mustChannel(t, f) + "/rotate-secret", map[string]any{}
		}},
		// Platforms sign their requests; no credential opens the route.
		{"POST", "/v1/channels/:channel/inbound", access{signed: http.StatusUnauthorized}, func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/channels/" + w.mustChannel(t, f) + "/inbound", map[string]any{"conversation_id": "c", "user_id": "u", "text": "hi"}
		}},
		// The link's signature opens it, whatever the caller's credential.
		{"GET", "/v1/knowledge/files/:token", access{signed: http.StatusForbidden}, fixed("/v1/knowledge/files/t.b.s.1.forged")},
		{"POST", "/v1/tenants/:tenant/knowledge-bases", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases", apiclient.CreateKnowledgeBaseRequest{Name: "Help", Slug: w.unique("kb")}
		}},
		{"GET", "/v1/tenants/:tenant/knowledge-bases", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases", nil
		}},
		{"GET", "/v1/tenants/:tenant/knowledge-bases/:kb", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f), nil
		}},
		{"PATCH", "/v1/tenants/:tenant/knowledge-bases/:kb", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f), map[string]any{"name": "Renamed"}
		}},
		{"DELETE", "/v1/tenants/:tenant/knowledge-bases/:kb", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f), nil
		}},
		{"POST", "/v1/tenants/:tenant/knowledge-bases/:kb/sources", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f) + "/sources", apiclient.AddSourceRequest{Text: "refunds take five days"}
		}},
		{"GET", "/v1/tenants/:tenant/knowledge-bases/:kb/sources", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f) + "/sources", nil
		}},
		{"GET", "/v1/tenants/:tenant/knowledge-bases/:kb/sources/:source", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return w.mustKnowledgeSource(t, f), nil
		}},
		{"DELETE", "/v1/tenants/:tenant/knowledge-bases/:kb/sources/:source", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return w.mustKnowledgeSource(t, f), nil
		}},
		{"POST", "/v1/tenants/:tenant/knowledge-bases/:kb/sources/:source/refresh", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return w.mustKnowledgeSource(t, f) + "/refresh", nil
		}},
		{"GET", "/v1/tenants/:tenant/knowledge-bases/:kb/sources/:source/chunks", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return w.mustKnowledgeSource(t, f) + "/chunks", nil
		}},
		{"POST", "/v1/tenants/:tenant/knowledge-bases/:kb/search", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f) + "/search", apiclient.SearchKnowledgeRequest{Query: "refunds"}
		}},
		{"POST", "/v1/tenants/:tenant/knowledge-bases/:kb/reindex", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/knowledge-bases/" + w.mustKnowledgeBase(t, f) + "/reindex", nil
		}},
		{"POST", "/v1/tenants/:tenant/bots", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots", apiclient.CreateBotRequest{Slug: w.unique("bot"), Config: botConfig(t)}
		}},
		{"GET", "/v1/tenants/:tenant/bots", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots", nil
		}},
		{"GET", "/v1/tenants/:tenant/bots/:bot", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug, nil
		}},
		{"POST", "/v1/tenants/:tenant/bots/:bot/versions", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/versions", apiclient.CreateVersionRequest{Config: botConfig(t)}
		}},
		{"GET", "/v1/tenants/:tenant/bots/:bot/versions", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/versions", nil
		}},
		{"GET", "/v1/tenants/:tenant/bots/:bot/versions/:n", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/versions/1", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/bots/:bot", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			slug := w.unique("doomed")
			if _, _, err := w.svc.Bots().Create(context.Background(), platform.Operator(), f.slug, slug, botConfig(t)); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/bots/" + slug, nil
		}},
		{"GET", "/v1/tenants/:tenant/bots/:bot/canary", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + w.canaryBot(t, f.slug, true) + "/canary", nil
		}},
		{"PUT", "/v1/tenants/:tenant/bots/:bot/canary", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + w.canaryBot(t, f.slug, false) + "/canary", apiclient.SetCanaryRequest{Version: 2, Percent: 10}
		}},
		{"DELETE", "/v1/tenants/:tenant/bots/:bot/canary", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + w.canaryBot(t, f.slug, true) + "/canary", nil
		}},
		{"POST", "/v1/tenants/:tenant/bots/:bot/canary/promote", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + w.canaryBot(t, f.slug, true) + "/canary/promote", nil
		}},
		{"PATCH", "/v1/tenants/:tenant/bots/:bot", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug, apiclient.UpdateBotRequest{RequirePassingTests: ptr(false)}
		}},
		{"GET", "/v1/tenants/:tenant/bots/:bot/versions/:n/diff/:m", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/versions/1/diff/1", nil
		}},
		{"POST", "/v1/tenants/:tenant/bots/:bot/tests", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/tests", apiclient.RunTestsRequest{Version: 1}
		}},
		{"POST", "/v1/tenants/:tenant/bots/:bot/publish", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/publish", apiclient.PublishRequest{Version: 1}
		}},
		{"GET", "/v1/tenants/:tenant/bots/:bot/draft", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/draft", nil
		}},
		{"PUT", "/v1/tenants/:tenant/bots/:bot/draft", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/draft", apiclient.Draft{Config: `{"name": "half typed`}
		}},
		{"DELETE", "/v1/tenants/:tenant/bots/:bot/draft", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/draft", nil
		}},
		{"POST", "/v1/tenants/:tenant/tools/try", role(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			// A loopback URL: the outbound policy refuses it at once, a 200 with is_error.
			config := strings.Replace(string(botConfig(t)), "https://shop.example.com", "http://127.0.0.1", 1)
			return "/v1/tenants/" + f.slug + "/tools/try", apiclient.ToolTrialRequest{Config: json.RawMessage(config),
				Tool: "lookup_order", Arguments: json.RawMessage(`{"order": "A1"}`)}
		}},
		{"POST", "/v1/tenants/:tenant/bots/:bot/dialogs", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			w.mustPublish(t, f)
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/dialogs", map[string]any{"user_id": "u1"}
		}},
		{"GET", "/v1/tenants/:tenant/dialogs", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs", nil
		}},
		{"GET", "/v1/tenants/:tenant/dialogs/:dialog", chatOr(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f), nil
		}},
		{"GET", "/v1/tenants/:tenant/dialogs/export", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			w.mustDialog(t, f)
			return "/v1/tenants/" + f.slug + "/dialogs/export", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/dialogs/:dialog", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f), nil
		}},
		{"DELETE", "/v1/tenants/:tenant/end-users/:user_id", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			w.mustDialog(t, f)
			return "/v1/tenants/" + f.slug + "/end-users/u1", nil
		}},
		{"GET", "/v1/tenants/:tenant/end-users/:user_id/memory", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/end-users/u1/memory", nil
		}},
		{"DELETE", "/v1/tenants/:tenant/end-users/:user_id/memory/:note", role(rankAdmin), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			n := &store.MemoryNote{TenantID: mustTenantID(t, w, f.slug), BotID: f.botID, UserID: "u1", Key: w.unique("key"), Value: "v", UpdatedAt: time.Now()}
			if err := w.st.Tenant(n.TenantID).Memory().Remember(context.Background(), n, 100); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/end-users/u1/memory/" + n.ID, nil
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/messages", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f) + "/messages", map[string]any{"text": "hello"}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/messages/:message/feedback", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			id, reply := w.mustRepliedDialog(t, f)
			return "/v1/tenants/" + f.slug + "/dialogs/" + id + "/messages/" + reply + "/feedback", map[string]any{"rating": "up"}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/tool-results", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustPausedDialog(t, f, "client") + "/tool-results",
				map[string]any{"results": []map[string]any{{"id": "call_1", "content": "here"}}}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/confirmations", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustPausedDialog(t, f, "confirmation") + "/confirmations",
				map[string]any{"id": "call_1", "approved": false}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/cancel", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f) + "/cancel", map[string]any{}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/close", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f) + "/close", map[string]any{"reason": "done"}
		}},
		{"GET", "/v1/tenants/:tenant/usage/series", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/usage/series?bot=" + f.botSlug, nil
		}},
		{"GET", "/v1/tenants/:tenant/analytics", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/analytics?bot=" + f.botSlug + "&compare=versions", nil
		}},
		{"GET", "/v1/tenants/:tenant/analytics/unanswered", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/analytics/unanswered?bot=" + f.botSlug, nil
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/rating", chatOr(rankEditor), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f) + "/rating", map[string]any{"rating": 4}
		}},
		{"PUT", "/v1/tenants/:tenant/dialogs/:dialog/labels", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustDialog(t, f) + "/labels", map[string]any{"labels": []string{"billing"}}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/to-test", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			id, tenantID := w.mustDialog(t, f), mustTenantID(t, w, f.slug)
			for _, m := range []*store.Message{
				{Kind: "user", Role: "user", Content: `[{"type":"text","text":"Hi."}]`, Text: "Hi."},
				{Kind: "assistant", Role: "assistant", Content: `[{"type":"text","text":"Hello."}]`, Text: "Hello."},
			} {
				m.TenantID, m.DialogID, m.Status, m.Meta = tenantID, id, store.MessageComplete, "{}"
				if err := w.st.Tenant(tenantID).Messages().Append(context.Background(), m); err != nil {
					t.Fatal(err)
				}
			}
			return "/v1/tenants/" + f.slug + "/dialogs/" + id + "/to-test", map[string]any{"tools_called": true}
		}},
		{"GET", "/v1/tenants/:tenant/dialogs/:dialog/events", chatOr(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			// A closed dialog's stream says so and ends.
			id := w.mustDialog(t, f)
			if _, err := w.client(f.adminKey).CloseDialog(context.Background(), f.slug, id, "done"); err != nil {
				t.Fatal(err)
			}
			return "/v1/tenants/" + f.slug + "/dialogs/" + id + "/events", nil
		}},
		{"GET", "/v1/tenants/:tenant/inbox", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			w.mustHandedOffDialog(t, f)
			return "/v1/tenants/" + f.slug + "/inbox", nil
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/assign", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/assign", map[string]any{}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/operator-messages", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/operator-messages", map[string]any{"text": "Hello, Ada here."}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/release", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/release", map[string]any{}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/typing", chatOr(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/typing", map[string]any{}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/read", chatOr(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/read", map[string]any{"seq": 1}
		}},
		{"POST", "/v1/tenants/:tenant/dialogs/:dialog/notes", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/notes", map[string]any{"text": "Refund already promised."}
		}},
		{"GET", "/v1/tenants/:tenant/dialogs/:dialog/notes", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/dialogs/" + w.mustHandedOffDialog(t, f) + "/notes", nil
		}},
		{"GET", "/v1/tenants/:tenant/canned-replies", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/canned-replies", nil
		}},
		{"POST", "/v1/tenants/:tenant/canned-replies", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/canned-replies", map[string]any{"shortcut": strings.ToLower(w.unique("refund")), "text": "Your refund is on its way."}
		}},
		{"PATCH", "/v1/tenants/:tenant/canned-replies/:id", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/canned-replies/" + w.mustCannedReply(t, f), map[string]any{"text": "Your refund is on its way, today."}
		}},
		{"DELETE", "/v1/tenants/:tenant/canned-replies/:id", role(rankOperator), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/canned-replies/" + w.mustCannedReply(t, f), nil
		}},
		{"GET", "/v1/tenants/:tenant/usage", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/usage?group_by=bot", nil
		}},
		{"GET", "/v1/models", face(true, 0), fixed("/v1/models")},
		{"GET", "/v1/models/:model", face(false, 0), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/models/" + f.botID, nil // by id: another tenant's key has a bot of the same slug
		}},
		{"POST", "/v1/chat/completions", face(false, 0), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			// The bot by id: another tenant's key has a bot of the same slug.
			return "/v1/chat/completions", map[string]any{"model": f.botID, "messages": []map[string]any{{"role": "user", "content": "hi"}}}
		}},
		{"POST", "/v1/tenants/:tenant/bots/:bot/mcp", face(false, sdkRefusal), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"}
		}},
		{"DELETE", "/v1/tenants/:tenant/bots/:bot/mcp", face(false, sdkRefusal), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/bots/" + f.botSlug + "/mcp", nil
		}},
		{"GET", "/v1/tenants/:tenant/limits", role(rankViewer), func(t *testing.T, w *world, f tenantFixture) (string, any) {
			return "/v1/tenants/" + f.slug + "/limits", nil
		}},
		{"PUT", "/v1/tenants/:tenant/limits", platformOnly, func(t *testing.T, w *world, f tenantFixture) (string, any) {
			quota := int64(5_000_000)
			return "/v1/tenants/" + f.slug + "/limits", apiclient.TenantLimits{DailyTokenQuota: &quota}
		}},
	}
}

// caller is one way of calling the API.
type caller struct {
	name string
	// token returns the bearer credential; "" sends none. Sessions log in
	// afresh each time, so a logout in one request cannot spoil the next.
	token func(t *testing.T) string
	// valid is false for callers that must be turned away with 401.
	valid bool
	// platform is the operator; otherTenant belongs to tenant beta only.
	platform, otherTenant bool
	// pk is a publishable key, bound to browser origins; sk a server key.
	pk, sk bool
	rank   int
}

// world is two tenants, alpha and beta, each with a bot, a key and a secret,
// and a caller of every kind.
type world struct {
	*env
	alpha, beta tenantFixture
	callers     []caller
	st          *store.Store
	n           atomic.Int64
}

func (w *world) unique(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, w.n.Add(1))
}

// canaryBot creates a bot with version 1 live and version 2 saved, with a
// canary on version 2 when withCanary.
func (w *world) canaryBot(t *testing.T, tenant string, withCanary bool) string {
	t.Helper()
	ctx, op := context.Background(), platform.Operator()
	slug := w.unique("canary")
	if _, _, err := w.svc.Bots().Create(ctx, op, tenant, slug, botConfig(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Versions().Publish(ctx, op, tenant, slug, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.svc.Versions().Create(ctx, op, tenant, slug, json.RawMessage(`{"basic_settings": {"name": "Candidate"}}`)); err != nil {
		t.Fatal(err)
	}
	if withCanary {
		if _, err := w.svc.Versions().SetCanary(ctx, op, tenant, slug, 2, 50); err != nil {
			t.Fatal(err)
		}
	}
	return slug
}

func (w *world) mustKey(t *testing.T, tenant string, in platform.APIKeyInput) platform.CreatedKey {
	t.Helper()
	k, err := w.svc.APIKeys().Create(context.Background(), platform.Operator(), tenant, in)
	if err != nil {
		t.Fatalf("create key in %s: %v", tenant, err)
	}
	return k
}

// mustWebhook adds an endpoint to f's tenant and returns its id.
func (w *world) mustWebhook(t *testing.T, f tenantFixture) string {
	t.Helper()
	h, err := w.svc.Webhooks().Create(context.Background(), platform.Operator(), f.slug,
		platform.WebhookInput{URL: "https://hooks.example.com/in", Events: []string{"*"}})
	if err != nil {
		t.Fatalf("create webhook in %s: %v", f.slug, err)
	}
	return h.ID
}

// mustKnowledgeBase adds a knowledge base to the tenant and returns its
// slug.
func (w *world) mustKnowledgeBase(t *testing.T, f tenantFixture) string {
	t.Helper()
	b, err := w.svc.Knowledge().CreateBase(context.Background(), platform.Operator(), f.slug,
		platform.KnowledgeBaseInput{Name: "Help", Slug: w.unique("kb")})
	if err != nil {
		t.Fatalf("create knowledge base in %s: %v", f.slug, err)
	}
	return b.Slug
}

// mustKnowledgeSource adds a base with a text source to the tenant and
// returns the source's path.
func (w *world) mustKnowledgeSource(t *testing.T, f tenantFixture) string {
	t.Helper()
	kb := w.mustKnowledgeBase(t, f)
	src, _, err := w.svc.Knowledge().AddSource(context.Background(), platform.Operator(), f.slug, kb,
		platform.SourceInput{Kind: store.SourceText, Content: []byte("refunds take five days")})
	if err != nil {
		t.Fatalf("add knowledge source in %s: %v", f.slug, err)
	}
	return "/v1/tenants/" + f.slug + "/knowledge-bases/" + kb + "/sources/" + src.ID
}

// mustChannel adds a webhook channel to the tenant's bot and returns its id.
func (w *world) mustChannel(t *testing.T, f tenantFixture) string {
	t.Helper()
	ch, err := w.svc.Channels().Create(context.Background(), platform.Operator(), f.slug, platform.ChannelInput{Kind: "webhook", Bot: f.botSlug})
	if err != nil {
		t.Fatalf("create channel in %s: %v", f.slug, err)
	}
	return ch.ID
}

// mustWebhookDelivery adds an endpoint with one delivery (a test event)
// and returns both ids.
func (w *world) mustWebhookDelivery(t *testing.T, f tenantFixture) (string, string) {
	t.Helper()
	id := w.mustWebhook(t, f)
	d, err := w.svc.Webhooks().Test(context.Background(), platform.Operator(), f.slug, id)
	if err != nil {
		t.Fatalf("test webhook in %s: %v", f.slug, err)
	}
	return id, d.ID
}

func (w *world) mustTenant(t *testing.T, slug string) tenantFixture {
	t.Helper()
	ctx, op := context.Background(), platform.Operator()
	f := tenantFixture{slug: slug, adminKey: w.mustCreateTenant(t, slug), botSlug: "helper", secret: "shop_token"}
	b, _, err := w.svc.Bots().CreateWithTests(ctx, op, slug, f.botSlug, botConfig(t), lookupTests("shipped"))
	if err != nil {
		t.Fatalf("create bot in %s: %v", slug, err)
	}
	f.botID = b.ID
	if _, err := w.svc.Versions().Publish(ctx, op, slug, f.botSlug, 1); err != nil {
		t.Fatalf("publish bot in %s: %v", slug, err)
	}
	f.keyID = w.mustKey(t, slug, platform.APIKeyInput{Name: "spare", Scopes: []string{"chat"}}).ID
	if _, err := w.svc.Secrets().Put(ctx, op, slug, f.secret, "value-of-"+slug); err != nil {
		t.Fatal(err)
	}
	return f
}

// session returns a caller that signs in as email each time.
func (w *world) session(email string) func(t *testing.T) string {
	return func(t *testing.T) string {
		s, err := w.svc.Auth().Login(context.Background(), email, "member-password")
		if err != nil {
			t.Fatalf("login %s: %v", email, err)
		}
		return s.Token
	}
}

func (w *world) member(t *testing.T, tenant, roleName string) string {
	t.Helper()
	ctx, op := context.Background(), platform.Operator()
	email := roleName + "@" + tenant + ".test"
	if roleName == "owner" {
		return email // made with the tenant
	}
	if _, err := w.svc.Users().Create(ctx, op, email, "member-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Members().Add(ctx, op, tenant, email, roleName); err != nil {
		t.Fatal(err)
	}
	return email
}

// mustSSO gives the tenant single sign-on settings (a public issuer
// address: saving checks the outbound policy, never the network).
func (w *world) mustSSO(t *testing.T, tenant string) {
	t.Helper()
	if _, err := w.svc.SingleSignOn().PutSSO(context.Background(), platform.Operator(), tenant, platform.SSOInput{Issuer: "https://93.184.215.14", ClientID: "parley"}); err != nil {
		t.Fatal(err)
	}
}

func newWorld(t *testing.T, st *store.Store) *world {
	t.Helper()
	w := &world{env: newEnv(t, st), st: st}
	w.alpha, w.beta = w.mustTenant(t, "alpha"), w.mustTenant(t, "beta")
	constant := func(s string) func(*testing.T) string { return func(*testing.T) string { return s } }
	revoked := w.mustKey(t, "alpha", platform.APIKeyInput{Name: "revoked", Scopes: []string{"admin"}})
	if _, err := w.svc.APIKeys().Revoke(context.Background(), platform.Operator(), "alpha", revoked.ID); err != nil {
		t.Fatal(err)
	}
	chatKey := w.mustKey(t, "alpha", platform.APIKeyInput{Name: "chat", Scopes: []string{"chat"}})
	pk := w.mustKey(t, "alpha", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{"https://alpha.example"}})
	w.callers = []caller{
		{name: "no credentials", token: constant("")},
		{name: "an unknown key", token: constant("sk_000000000000000000000000000")},
		{name: "a revoked admin key", token: constant(revoked.Key)},
		{name: "the platform token", token: constant(testPlatformToken), valid: true, platform: true},
		{name: "alpha's admin-scoped key", token: constant(w.alpha.adminKey), valid: true, sk: true, rank: rankAdmin},
		{name: "alpha's chat-scoped key", token: constant(chatKey.Key), valid: true, sk: true, rank: rankChat},
		{name: "alpha's publishable key", token: constant(pk.Key), valid: true, rank: rankChat, pk: true},
		{name: "alpha's owner session", token: w.session(w.member(t, "alpha", "owner")), valid: true, rank: rankOwner},
		{name: "alpha's admin session", token: w.session(w.member(t, "alpha", "admin")), valid: true, rank: rankAdmin},
		{name: "alpha's editor session", token: w.session(w.member(t, "alpha", "editor")), valid: true, rank: rankEditor},
		{name: "alpha's operator session", token: w.session(w.member(t, "alpha", "operator")), valid: true, rank: rankOperator},
		{name: "alpha's viewer session", token: w.session(w.member(t, "alpha", "viewer")), valid: true, rank: rankViewer},
		{name: "beta's admin-scoped key", token: constant(w.beta.adminKey), valid: true, sk: true, otherTenant: true, rank: rankAdmin},
		{name: "beta's owner session", token: w.session(w.member(t, "beta", "owner")), valid: true, otherTenant: true, rank: rankOwner},
	}
	return w
}

// expect is the status class a caller must get on a route of tenant alpha.
func expect(r routeCase, c caller) int {
	if want := expectAccess(r, c); want != http.StatusOK || r.need.reached == 0 {
		return want
	}
	return r.need.reached
}

func expectAccess(r routeCase, c caller) int {
	switch {
	case r.need.signed != 0:
		return r.need.signed
	case r.need.serverKey && (!c.valid || !c.sk):
		return http.StatusUnauthorized
	case r.need.serverKey && c.otherTenant && !r.need.keyTenant:
		return http.StatusNotFound
	case r.need.serverKey && r.need.reached != 0:
		return r.need.reached
	case r.need.serverKey:
		return http.StatusOK
	case r.need.public:
		return http.StatusOK
	case !c.valid:
		return http.StatusUnauthorized
	case r.need.person && (c.platform || c.sk || c.pk):
		return http.StatusForbidden
	case r.need.any, c.platform:
		return http.StatusOK
	case r.need.platform:
		return http.StatusForbidden
	case c.otherTenant:
		return http.StatusNotFound
	case r.need.chat && c.rank == rankChat && c.pk:
		return http.StatusForbidden
	case r.need.chat && c.rank == rankChat:
		return http.StatusOK
	case c.rank < r.need.minRank:
		return http.StatusForbidden
	default:
		return http.StatusOK
	}
}

// call sends one request and returns its status; for errors it also checks
// the error body has the code of its status.
func call(t *testing.T, cl *apiclient.Client, method, path string, body any) int {
	t.Helper()
	err := cl.Do(context.Background(), method, path, body, nil)
	if err == nil {
		return http.StatusOK
	}
	var apiErr *apiclient.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if want := codeFor[apiErr.Status]; apiErr.Code != want {
		t.Errorf("%s %s: status %d came with code %q, want %q", method, path, apiErr.Status, apiErr.Code, want)
	}
	return apiErr.Status
}

// sdkRefusal is what the MCP SDK's transport answers apiclient's requests
// (no session, no text/event-stream in Accept), which only a caller let in
// gets to see.
const sdkRefusal = http.StatusBadRequest

// faceCall is call for the OpenAI and MCP faces, whose error bodies are
// not Parley's: only the status is read.
func faceCall(t *testing.T, cl *apiclient.Client, method, path string, body any) int {
	t.Helper()
	var apiErr *apiclient.Error
	if err := cl.Do(context.Background(), method, path, body, nil); errors.As(err, &apiErr) {
		return apiErr.Status
	} else if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return http.StatusOK
}

var codeFor = map[int]string{
	400: apiclient.CodeBadRequest, 401: apiclient.CodeUnauthorized, 403: apiclient.CodeForbidden,
	404: apiclient.CodeNotFound, 405: apiclient.CodeMethodNotAllowed, 409: apiclient.CodeConflict,
	413: apiclient.CodeTooLarge, 422: apiclient.CodeInvalid, 429: apiclient.CodeRateLimited,
	500: apiclient.CodeInternal, 503: apiclient.CodeUnavailable,
}

// TestEveryRouteIsolatesTenantsAndEnforcesPermissions walks every route with
// every kind of caller: no or bad credentials get 401, another tenant's
// callers get 404, callers without the permission 403, the rest succeed.
func TestEveryRouteIsolatesTenantsAndEnforcesPermissions(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		for _, r := range routeTable() {
			for _, c := range w.callers {
				t.Run(fmt.Sprintf("%s %s by %s", r.method, r.path, c.name), func(t *testing.T) {
					path, body := r.request(t, w, w.alpha)
					call := call
					if r.need.serverKey {
						call = faceCall // OpenAI's and the SDK's error shapes
					}
					got := call(t, w.client(c.token(t)), r.method, path, body)
					if want := expect(r, c); got != want && !(want == http.StatusOK && got < 300) {
						t.Errorf("%s %s: got status %d, want %d", r.method, path, got, want)
					}
				})
			}
		}
	})
}

// TestResourcesOfAnotherTenantAreNotFoundEvenInsideYourOwnTenant names
// beta's ids under alpha's path: the store's tenant scoping must answer 404
// although the caller may act in alpha.
func TestResourcesOfAnotherTenantAreNotFoundEvenInsideYourOwnTenant(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newWorld(t, st)
		cl := w.client(w.alpha.adminKey)
		a, b := "/v1/tenants/alpha", w.beta
		betaDialog, betaPaused := w.mustDialog(t, b), w.mustPausedDialog(t, b, "client")
		betaHook, betaDelivery := w.mustWebhookDelivery(t, b)
		betaChannel := w.mustChannel(t, b)
		betaSource := strings.TrimPrefix(w.mustKnowledgeSource(t, b), "/v1/tenants/beta/knowledge-bases/")
		betaBase, _, _ := strings.Cut(betaSource, "/")
		_, betaSourceID, _ := strings.Cut(betaSource, "/sources/")
		alphaBase := w.mustKnowledgeBase(t, w.alpha)
		cases := []struct {
			name, method, path string
			body               any
		}{
			{"reading beta's bot by id", "GET", a + "/bots/" + b.botID, nil},
			{"listing versions of beta's bot", "GET", a + "/bots/" + b.botID + "/versions", nil},
			{"reading a version of beta's bot", "GET", a + "/bots/" + b.botID + "/versions/1", nil},
			{"adding a version to beta's bot", "POST", a + "/bots/" + b.botID + "/versions", apiclient.CreateVersionRequest{Config: botConfig(t)}},
			{"publishing beta's bot", "POST", a + "/bots/" + b.botID + "/publish", apiclient.PublishRequest{Version: 1}},
			{"revoking beta's key", "DELETE", a + "/api-keys/" + b.keyID, nil},
			{"reading beta by id with alpha's key", "GET", "/v1/tenants/" + mustTenantID(t, w, "beta"), nil},
			{"reading beta's dialog", "GET", a + "/dialogs/" + betaDialog, nil},
			{"sending a message to beta's dialog", "POST", a + "/dialogs/" + betaDialog + "/messages", map[string]any{"text": "hi"}},
			{"answering beta's paused dialog", "POST", a + "/dialogs/" + betaPaused + "/tool-results",
				map[string]any{"results": []map[string]any{{"id": "call_1", "content": "x"}}}},
			{"deleting beta's dialog", "DELETE", a + "/dialogs/" + betaDialog, nil},
			{"starting a dialog with beta's bot", "POST", a + "/bots/" + b.botID + "/dialogs", map[string]any{}},
			{"reading beta's webhook", "GET", a + "/webhooks/" + betaHook, nil},
			{"changing beta's webhook", "PATCH", a + "/webhooks/" + betaHook, map[string]any{"url": "https://evil.example.com/"}},
			{"deleting beta's webhook", "DELETE", a + "/webhooks/" + betaHook, nil},
			{"rotating beta's webhook secret", "POST", a + "/webhooks/" + betaHook + "/rotate-secret", map[string]any{}},
			{"testing beta's webhook", "POST", a + "/webhooks/" + betaHook + "/test", nil},
			{"reading beta's delivery log", "GET", a + "/webhooks/" + betaHook + "/deliveries", nil},
			{"replaying beta's delivery", "POST", a + "/webhooks/" + betaHook + "/deliveries/" + betaDelivery + "/replay", nil},
			{"reading beta's channel", "GET", a + "/channels/" + betaChannel, nil},
			{"changing beta's channel", "PATCH", a + "/channels/" + betaChannel, map[string]any{"enabled": false}},
			{"deleting beta's channel", "DELETE", a + "/channels/" + betaChannel, nil},
			{"setting beta's channel's Telegram webhook", "POST", a + "/channels/" + betaChannel + "/telegram/set-webhook", nil},
			{"rotating beta's channel secret", "POST", a + "/channels/" + betaChannel + "/rotate-secret", map[string]any{}},
			{"reading beta's knowledge base", "GET", a + "/knowledge-bases/" + betaBase, nil},
			{"renaming beta's knowledge base", "PATCH", a + "/knowledge-bases/" + betaBase, map[string]any{"name": "Mine"}},
			{"deleting beta's knowledge base", "DELETE", a + "/knowledge-bases/" + betaBase, nil},
			{"adding a source to beta's knowledge base", "POST", a + "/knowledge-bases/" + betaBase + "/sources", map[string]any{"text": "x"}},
			{"listing beta's sources", "GET", a + "/knowledge-bases/" + betaBase + "/sources", nil},
			{"searching beta's knowledge base", "POST", a + "/knowledge-bases/" + betaBase + "/search", map[string]any{"query": "refunds"}},
			{"reindexing beta's knowledge base", "POST", a + "/knowledge-bases/" + betaBase + "/reindex", nil},
			{"reading beta's source", "GET", a + "/knowledge-bases/" + betaSource, nil},
			{"deleting beta's source", "DELETE", a + "/knowledge-bases/" + betaSource, nil},
			{"refreshing beta's source", "POST", a + "/knowledge-bases/" + betaSource + "/refresh", nil},
			{"reading beta's chunks", "GET", a + "/knowledge-bases/" + betaSource + "/chunks", nil},
			{"reading beta's source through alpha's base", "GET", a + "/knowledge-bases/" + alphaBase + "/sources/" + betaSourceID, nil},
			{"deleting beta's source through alpha's base", "DELETE", a + "/knowledge-bases/" + alphaBase + "/sources/" + betaSourceID, nil},
			{"reading beta's chunks through alpha's base", "GET", a + "/knowledge-bases/" + alphaBase + "/sources/" + betaSourceID + "/chunks", nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if got := call(t, cl, tc.method, tc.path, tc.body); got != http.StatusNotFound {
					t.Errorf("got status %d, want 404", got)
				}
			})
		}
		// And beta's key still works: nothing above touched it.
		if got := call(t, w.client(w.beta.adminKey), "GET", "/v1/tenants/beta/api-keys", nil); got != http.StatusOK {
			t.Errorf("beta's admin key: got %d after alpha's attempts, want 200", got)
		}
	})
}

func mustTenantID(t *testing.T, w *world, slug string) string {
	t.Helper()
	tn, err := w.svc.Tenants().Get(context.Background(), platform.Operator(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return tn.ID
}

// TestEveryRouteIsInTheIsolationTable keeps the table honest: a new route
// must be added to it, with the access it requires.
func TestEveryRouteIsInTheIsolationTable(t *testing.T) {
	t.Parallel()
	w := newEnv(t, storetest.OpenSQLite(t))
	inTable := map[string]bool{}
	for _, r := range routeTable() {
		inTable[r.method+" "+r.path] = true
	}
	var registered []string
	for _, r := range w.h.Routes() {
		key := r.Method + " " + r.Path
		registered = append(registered, key)
		if !inTable[key] {
			t.Errorf("route %s is registered but missing from routeTable in isolation_test.go", key)
		}
		delete(inTable, key)
	}
	for key := range inTable {
		t.Errorf("routeTable lists %s, which is not registered", key)
	}
	sort.Strings(registered)
	t.Logf("%d routes: %s", len(registered), strings.Join(registered, ", "))
}

// mustPublish makes version 1 of the fixture's bot live, so dialogs can
// start.
func (w *world) mustPublish(t *testing.T, f tenantFixture) {
	t.Helper()
	if _, err := w.svc.Versions().Publish(context.Background(), platform.Operator(), f.slug, f.botSlug, 1); err != nil {
		t.Fatal(err)
	}
}

// mustDialog starts a dialog with the fixture's bot as its admin.
func (w *world) mustDialog(t *testing.T, f tenantFixture) string {
	t.Helper()
	w.mustPublish(t, f)
	var d struct {
		ID string `json:"id"`
	}
	err := w.client(f.adminKey).Do(context.Background(), "POST", "/v1/tenants/"+f.slug+"/bots/"+f.botSlug+"/dialogs", map[string]any{}, &d)
	if err != nil || d.ID == "" {
		t.Fatalf("create dialog: %v", err)
	}
	return d.ID
}

// mustRepliedDialog starts a dialog holding one reply of the bot, and
// returns the dialog's id and the reply's.
func (w *world) mustRepliedDialog(t *testing.T, f tenantFixture) (string, string) {
	t.Helper()
	id := w.mustDialog(t, f)
	reply := &store.Message{TenantID: mustTenantID(t, w, f.slug), DialogID: id, Kind: "assistant", Role: "assistant",
		Content: `[{"type":"text","text":"Hello."}]`, Text: "Hello.", Status: store.MessageComplete, Meta: "{}"}
	if err := w.st.Tenant(reply.TenantID).Messages().Append(context.Background(), reply); err != nil {
		t.Fatal(err)
	}
	return id, reply.ID
}

// mustHandedOffDialog starts a dialog the bot handed to a person, waiting
// in the inbox.
func (w *world) mustCannedReply(t *testing.T, f tenantFixture) string {
	t.Helper()
	r, err := w.svc.CannedReplies().Create(context.Background(), platform.Operator(), f.slug, strings.ToLower(w.unique("hello")), "Hello!")
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func (w *world) mustHandedOffDialog(t *testing.T, f tenantFixture) string {
	t.Helper()
	id, tenantID := w.mustDialog(t, f), mustTenantID(t, w, f.slug)
	ctx := context.Background()
	err := w.st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.Tenant(tenantID).Dialogs().SaveState(ctx, id, store.DialogHandoff, `{"messages":null}`); err != nil {
			return err
		}
		return tx.Tenant(tenantID).Handoffs().Request(ctx, id, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// mustPausedDialog starts a dialog paused on call_1, as a run waiting for
// a client tool's result or a confirmation leaves it.
func (w *world) mustPausedDialog(t *testing.T, f tenantFixture, kind string) string {
	t.Helper()
	id := w.mustDialog(t, f)
	// The model's call the dialog waits on, as the loop stores it: the
	// run that answers it sends the model a history that holds it.
	call := &store.Message{TenantID: mustTenantID(t, w, f.slug), DialogID: id, Kind: "assistant", Role: "assistant",
		Content: `[{"type":"tool_use","tool_use":{"id":"call_1","name":"current_time","arguments":{}}}]`,
		Status:  store.MessageComplete, Meta: "{}"}
	if err := w.st.Tenant(call.TenantID).Messages().Append(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	state := `{"messages":null,"pending":[{"id":"call_1","name":"current_time","arguments":{},"kind":"` + kind + `"}]}`
	if err := w.st.Tenant(mustTenantID(t, w, f.slug)).Dialogs().SaveState(context.Background(), id, store.DialogPaused, state); err != nil {
		t.Fatal(err)
	}
	return id
}

// mustInvite invites a new viewer to f's tenant, as the operator.
func (w *world) mustInvite(t *testing.T, f tenantFixture) platform.Invitation {
	t.Helper()
	inv, err := w.svc.Members().Invite(context.Background(), platform.Operator(), f.slug, w.unique("invitee")+"@example.com", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
