package dialog

import (
	"context"
	"maps"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// providersFor returns the providers the bot may name in this run: the
// server's, and the tenant's own that the bot names, built for this run
// with the tenant's key. A tenant's provider of the same name as a
// server's takes its place for that tenant's bots only: another tenant's
// providers are never looked up, so its key is never used.
func (r *Runtime) providersFor(ctx context.Context, tenantID string, bot *botconfig.Bot) (Providers, error) {
	uses := bot.ProviderUses()
	if len(uses) == 0 || r.opts.NewProvider == nil {
		return r.opts.Providers, nil
	}
	names := make([]string, len(uses))
	for i, u := range uses {
		names[i] = u.Name
	}
	specs, err := r.svc.Providers().OfTenant(ctx, tenantID, names)
	if err != nil || len(specs) == 0 {
		return r.opts.Providers, err
	}
	out := maps.Clone(r.opts.Providers)
	if out == nil {
		out = Providers{}
	}
	for _, spec := range specs {
		p, err := r.opts.NewProvider(spec, r.opts.HTTPClient)
		if err != nil {
			// A base URL the platform accepted but the provider refuses:
			// the bot falls over to what else it names.
			r.log.WarnContext(ctx, "dialog: tenant provider unusable", "tenant", tenantID, "provider", spec.Name, "err", err)
			continue
		}
		out[spec.Name] = meteredProvider{Provider: p, m: r.metrics, catalog: r.opts.Catalog, label: "tenant_" + spec.Kind}
	}
	return out, nil
}
