package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/store"
)

// Configs is compiling and validating bot configs: reach it with Service.Configs().
type Configs struct{ svc *Service }

// Configs returns compiling and validating bot configs.
func (s *Service) Configs() Configs { return Configs{s} }

// checkAgents refuses a config whose agents name the bot itself or a bot
// the tenant does not have, with a pointer to each. Only the tenant's own
// bots are looked up: another tenant's slug is as unknown as a typo.
func (c Configs) checkAgents(ctx context.Context, tenantID, self string, bot *botconfig.Bot) error {
	s := c.svc
	var details []Detail
	for _, u := range bot.AgentUses() {
		if u.Bot == self {
			details = append(details, Detail{Pointer: u.Pointer, Message: fmt.Sprintf(
				"%q is this bot; an agent must be another bot of the tenant", u.Bot)})
			continue
		}
		b, err := s.store.Tenant(tenantID).Bots().Get(ctx, u.Bot)
		switch {
		case errors.Is(err, store.ErrNotFound) || (err == nil && b.Slug != u.Bot):
			details = append(details, Detail{Pointer: u.Pointer, Message: fmt.Sprintf(
				"unknown bot %q; create it first, or name one of the tenant's bots by its slug", u.Bot)})
		case err != nil:
			return s.internal(ctx, "check agents", err)
		}
	}
	if len(details) == 0 {
		return nil
	}
	return Invalid(details...)
}

// agentCallers names the tenant's bots whose live config (the published
// version, or the canary) calls callee as an agent, as "triage (v3)" or
// "sales (canary v4)", sorted. A saved version that is not live calls
// nothing yet.
func agentCallers(ctx context.Context, st *store.Store, callee *store.Bot) ([]string, error) {
	var callers []string
	for page := (store.Page{Limit: store.MaxPageSize}); ; {
		bots, next, err := st.Tenant(callee.TenantID).Bots().List(ctx, page)
		if err != nil {
			return nil, err
		}
		for _, b := range bots {
			if b.ID == callee.ID {
				continue
			}
			for n, label := range liveVersions(&b) {
				calls, err := callsAgent(ctx, st, &b, n, callee.Slug)
				if err != nil {
					return nil, err
				}
				if calls {
					callers = append(callers, fmt.Sprintf("%s (%s)", b.Slug, label))
				}
			}
		}
		if next == "" {
			break
		}
		page.Cursor = next
	}
	slices.Sort(callers)
	return callers, nil
}

// liveVersions are the numbers of b's versions that new dialogs run, with
// how to name them: "v3", and "canary v4" while a canary runs.
func liveVersions(b *store.Bot) map[int]string {
	live := map[int]string{}
	if b.PublishedVersion > 0 {
		live[b.PublishedVersion] = fmt.Sprintf("v%d", b.PublishedVersion)
	}
	if b.CanaryVersion > 0 && b.CanaryVersion != b.PublishedVersion {
		live[b.CanaryVersion] = fmt.Sprintf("canary v%d", b.CanaryVersion)
	}
	return live
}

// callsAgent reports whether version n of b names slug in its agents. It
// reads only that field: a stored config that no longer compiles (the
// rules grew stricter) still calls what it names.
func callsAgent(ctx context.Context, st *store.Store, b *store.Bot, n int, slug string) (bool, error) {
	v, err := st.Tenant(b.TenantID).Versions().Get(ctx, b.ID, n)
	if err != nil {
		return false, err
	}
	var cfg struct {
		Agents []botconfig.AgentRef `json:"agents"`
	}
	if err := json.Unmarshal([]byte(v.Config), &cfg); err != nil {
		return false, nil // saved configs are JSON objects; one that is not names no agent
	}
	return slices.ContainsFunc(cfg.Agents, func(a botconfig.AgentRef) bool { return a.Bot == slug }), nil
}
