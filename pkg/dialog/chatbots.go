package dialog

import (
	"context"
	"slices"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// ChatBot is a published bot as a chat caller sees it: what the API's
// OpenAI face lists as a model and its MCP face serves.
type ChatBot struct {
	ID   string
	Slug string
	Name string
	// Description is the config's basic_settings.description (ChatBot
	// only; ChatBots leaves it empty).
	Description string
	// Version is the published version; Fingerprint its config hash
	// (ChatBot only).
	Version     int
	Fingerprint string
	// ToolNames are the names of the published version's config and
	// native tools, and MCPServers the names of its MCP servers, whose
	// tools are named "<server>__<tool>" (ChatBot only): the names a
	// caller's own tools may not take.
	ToolNames  []string
	MCPServers []string
	CreatedAt  time.Time
}

// ChatBots lists the tenant's bots that p may chat with and that have a
// published version, oldest first.
func (r *Runtime) ChatBots(ctx context.Context, p *platform.Principal, tenant string) ([]ChatBot, error) {
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return nil, err
	}
	out := []ChatBot{}
	page := store.Page{Limit: store.MaxPageSize}
	for {
		rows, next, err := r.store.Tenant(tenantID).Bots().List(ctx, page)
		if err != nil {
			return nil, r.storeErr(ctx, "chat bots", "bot", err)
		}
		for _, b := range rows {
			if b.PublishedVersion == 0 || !mayChatWith(p, b.ID) {
				continue
			}
			out = append(out, ChatBot{ID: b.ID, Slug: b.Slug, Name: b.Name, Version: b.PublishedVersion, CreatedAt: b.CreatedAt})
		}
		if next == "" {
			return out, nil
		}
		page.Cursor = next
	}
}

// ChatBot returns the tenant's bot (id or slug) that p may chat with, on
// its published version; one without a published version is a conflict,
// as for CreateDialog.
func (r *Runtime) ChatBot(ctx context.Context, p *platform.Principal, tenant, bot string) (ChatBot, error) {
	b, err := r.svc.Auth().AuthorizeChat(ctx, p, tenant, bot, "")
	if err != nil {
		return ChatBot{}, err
	}
	if b.PublishedVersion == 0 {
		return ChatBot{}, platform.Errorf(platform.CodeConflict, "bot %s has no published version yet", b.Slug)
	}
	v, err := r.store.Tenant(b.TenantID).Versions().Get(ctx, b.ID, b.PublishedVersion)
	if err != nil {
		return ChatBot{}, r.storeErr(ctx, "chat bot: version", "version", err)
	}
	compiled, err := r.compiled(ctx, v)
	if err != nil {
		return ChatBot{}, err
	}
	out := ChatBot{ID: b.ID, Slug: b.Slug, Name: b.Name, Description: compiled.Description,
		Version: v.Number, Fingerprint: v.Fingerprint, CreatedAt: b.CreatedAt,
		ToolNames: slices.Clone(compiled.NativeTools)}
	for _, t := range compiled.Tools {
		out.ToolNames = append(out.ToolNames, t.Name)
	}
	if compiled.Runtime.RequireDoneTool {
		out.ToolNames = append(out.ToolNames, "done") // the loop's own finishing tool
	}
	for _, m := range compiled.MCPServers {
		out.MCPServers = append(out.MCPServers, m.Name)
	}
	return out, nil
}

// mayChatWith says whether p may chat with the tenant's bot botID: any,
// unless p is bound to one (leaseBot).
func mayChatWith(p *platform.Principal, botID string) bool {
	bot := leaseBot(p)
	return bot == "" || bot == botID
}
