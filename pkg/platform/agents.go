package platform

import (
	"context"
	"errors"
	"fmt"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/store"
)

// checkAgents refuses a config whose agents name the bot itself or a bot
// the tenant does not have, with a pointer to each. Only the tenant's own
// bots are looked up: another tenant's slug is as unknown as a typo.
func (s *Service) checkAgents(ctx context.Context, tenantID, self string, bot *botconfig.Bot) error {
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
