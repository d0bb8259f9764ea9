package platform

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
)

// Options are the Service's collaborators. Sealer, Authorizer, Clock and
// Logger are required.
type Options struct {
	// Sealer encrypts tenant secrets.
	Sealer *auth.Sealer
	// Authorizer decides permissions (auth.NewAuthorizer()).
	Authorizer *auth.Authorizer
	// Passwords hashes user passwords; the zero value is bcrypt's default
	// cost.
	Passwords auth.PasswordHasher
	// PlatformToken authenticates the operator; empty disables it.
	PlatformToken string
	// SessionTTL is how long an admin UI sign-in lasts; default 12 hours.
	SessionTTL time.Duration
	// Compile validates and compiles a bot config; default
	// botconfig.Options{}.LoadAndCompile, whose zero options allow stdio MCP
	// servers no env keys. cmd/parley passes the operator's options; an
	// operator may wrap it to add checks. A botconfig.Problems error becomes
	// an invalid Error with its pointers.
	Compile func(config []byte) (*botconfig.Bot, error)
	// ServerProviders are the names of the server's own model providers;
	// a saved config may name those and the tenant's (PUT /providers).
	// Nil checks no provider names.
	ServerProviders []string
	// ServerModels are the model lists of the server's providers, by
	// name; "" is the default provider, which a bot that names none
	// uses. A saved config that asks one of them for a model its list
	// lacks gets a warning. A provider without a list is not checked.
	ServerModels map[string][]string
	// Clock returns the current time (time.Now). Key expiry and sessions
	// use it.
	Clock func() time.Time
	// Logger receives internal errors with their causes.
	Logger *slog.Logger
	// OutboundPolicy, when set, checks a webhook URL's destination as it
	// is saved, for early feedback; deliveries check it as they dial
	// either way.
	OutboundPolicy *outbound.Policy
	// OIDC is the operator's OpenID Connect provider for admin UI
	// sign-in (PARLEY_OIDC_*); the zero value offers none. Tenants may
	// set up their own (PUT /sso). Both are reached through
	// OutboundPolicy.
	OIDC OIDCProvider
	// Embedders finds the embedder of a knowledge base's embedding
	// provider by name, to embed search queries; nil searches knowledge
	// by keyword alone.
	Embedders func(provider string) (llm.Embedder, bool)
}

// Service is the application layer: every operation on tenants, users,
// keys, secrets, bots and versions, each authorised against the calling
// Principal. It is safe for concurrent use.
type Service struct {
	store *store.Store
	opts  Options
	log   *slog.Logger
	// hooks caches who subscribes to which webhook events; wake nudges
	// the deliverer when an event was written.
	hooks *subscriptions
	wake  chan struct{}
	// queued nudges this process's knowledge indexer: a source waits.
	queued chan struct{}
	// quotaEvents remembers the tenant days whose usage.quota_reached
	// this process wrote.
	quotaEvents sync.Map
	// searcher searches knowledge bases; made on the first search.
	searcher *lazySearcher
	// knowledge measures embedding tokens and search latency
	// (knowledge_metering.go); shared with InTx's Services.
	knowledge *knowledgeMeters
}

// New returns a Service over st.
func New(st *store.Store, opts Options) (*Service, error) {
	var missing []string
	if st == nil {
		missing = append(missing, "a store")
	}
	for _, o := range []struct {
		name   string
		absent bool
	}{
		{"Options.Sealer", opts.Sealer == nil},
		{"Options.Authorizer", opts.Authorizer == nil},
		{"Options.Clock", opts.Clock == nil},
		{"Options.Logger", opts.Logger == nil},
	} {
		if o.absent {
			missing = append(missing, o.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("platform: %s required", strings.Join(missing, ", "))
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.Compile == nil {
		opts.Compile = botconfig.Options{}.LoadAndCompile
	}
	return &Service{store: st, opts: opts, log: opts.Logger, hooks: newSubscriptions(), wake: make(chan struct{}, 1), queued: make(chan struct{}, 1),
		searcher: &lazySearcher{st: st}, knowledge: newKnowledgeMeters()}, nil
}

// InTx runs fn with a Service whose every write goes to one database
// transaction: all of fn's changes commit together when it returns nil,
// and none does when it returns an error. It is for a batch of
// administrative changes that must not be left half-made (parley apply of
// one tenant); fn must not start dialog runs, which take leases of their
// own. Caches this process keeps (webhook subscriptions) may be dropped
// for changes that then roll back; they reload.
func (s *Service) InTx(ctx context.Context, fn func(tx *Service) error) error {
	return s.store.Tx(ctx, func(st *store.Store) error {
		return fn(&Service{store: st, opts: s.opts, log: s.log, hooks: s.hooks, wake: s.wake, queued: s.queued, searcher: s.searcher,
			knowledge: s.knowledge})
	})
}

// Ping checks that the database answers, for /readyz.
func (s *Service) Ping(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return s.internal(ctx, "ping", err)
	}
	return nil
}

func (s *Service) now() time.Time { return s.opts.Clock().UTC() }

// internal logs err with where it happened and returns an Error that says
// nothing about it, so database or driver text never reaches callers.
func (s *Service) internal(ctx context.Context, op string, err error) *Error {
	s.log.ErrorContext(ctx, "platform: internal error", "op", op, "err", err)
	return Internal(err)
}

// storeErr maps a store error: ErrNotFound becomes not_found for what,
// ErrConflict a conflict saying conflictMsg, anything else internal.
func (s *Service) storeErr(ctx context.Context, op, what, conflictMsg string, err error) error {
	if err == nil {
		return nil
	}
	if e := StoreError(err, what, conflictMsg); e != nil {
		return e
	}
	return s.internal(ctx, op, err)
}
