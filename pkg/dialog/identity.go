package dialog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/identity"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// AnonymousPrefix starts the generated id of a widget visitor without a
// signed user token.
const AnonymousPrefix = "anon_"

// endUser decides who a new dialog's end user is and fills the bot's
// identity variables from a verified token. A signed token (in.UserToken)
// names the user by its sub; without one, a widget (pk_) caller is an
// anonymous visitor with a generated id and may not choose user_id, while
// a server-side caller may name the user as before.
func (r *Runtime) endUser(ctx context.Context, p *platform.Principal, tenantID string, vars []botconfig.ContextVariable, in *CreateDialogInput) error {
	widget := p.KeyKind == auth.KindPublishable
	if err := checkSources(widget, vars, in.Context); err != nil {
		return err
	}
	if in.UserToken == "" {
		if !widget {
			if strings.HasPrefix(in.UserID, AnonymousPrefix) {
				return platform.Invalid(platform.Detail{Pointer: "/user_id",
					Message: "user ids starting with " + AnonymousPrefix + " are the widget's anonymous visitors'; name your user otherwise"})
			}
			return nil
		}
		if in.UserID != "" {
			return forbidden("/user_id", "a widget (pk_) key cannot choose user_id; have the site sign a user token (data-user-token) whose sub is the user's id")
		}
		in.UserID = anonymousID()
		return nil
	}
	user, err := r.verifyUser(ctx, tenantID, in.UserToken)
	if err != nil {
		return err
	}
	if in.UserID != "" && in.UserID != user.ID {
		return platform.Invalid(platform.Detail{Pointer: "/user_id", Message: "differs from the user token's sub; leave user_id out when you send a user token"})
	}
	in.UserID = user.ID
	for _, cv := range vars {
		if cv.From() != botconfig.SourceIdentity {
			continue
		}
		if v, ok := claimString(user.Claims[cv.ClaimName()]); ok {
			if in.Context == nil {
				in.Context = map[string]string{}
			}
			in.Context[cv.Name] = v
		}
	}
	return nil
}

// verifyUser checks an end user's signed token against the tenant's
// identity settings.
func (r *Runtime) verifyUser(ctx context.Context, tenantID, token string) (identity.User, error) {
	settings, err := r.svc.Identities().Settings(ctx, tenantID)
	if err != nil {
		return identity.User{}, err
	}
	user, err := r.ids.Verify(ctx, settings, token)
	if err == nil && strings.HasPrefix(user.ID, AnonymousPrefix) {
		// The anonymous namespace: a dialog there is open to any pk_ caller
		// holding its id, so a signed-in user must never land in it.
		err = &identity.Error{Reason: identity.ReasonSubject,
			Message: "the user token's sub starts with " + AnonymousPrefix + ", which names the widget's anonymous visitors; give signed-in users ids of another form"}
	}
	var refused *identity.Error
	if errors.As(err, &refused) {
		r.metrics.userToken(refused.Reason)
		e := platform.Wrap(err, platform.CodeUnauthorized, "user token refused (%s): %s", refused.Reason, refused.Message)
		// The body's user_token, or the X-Parley-User-Token header.
		e.Details = []platform.Detail{{Pointer: "/user_token", Message: refused.Message}}
		return identity.User{}, e
	}
	if err != nil {
		return identity.User{}, err
	}
	r.metrics.userToken("accepted")
	return user, nil
}

// sameEndUser lets a widget (pk_) caller reach only the dialogs of the
// end user it speaks for: with a signed user token, that user's; without
// one, an anonymous visitor's, whose unguessable dialog id is all it has.
// A pk_ key is public, so a dialog id alone must not open a signed-in
// user's conversation. Another user's dialog is not_found, as another
// bot's is. Server-side callers are trusted with every dialog of their
// tenant.
func (r *Runtime) sameEndUser(ctx context.Context, p *platform.Principal, d *store.Dialog) error {
	if p.KeyKind != auth.KindPublishable {
		return nil
	}
	if p.UserToken == "" {
		if strings.HasPrefix(d.UserID, AnonymousPrefix) {
			return nil
		}
		return platform.NotFound("dialog")
	}
	user, err := r.verifyUser(ctx, d.TenantID, p.UserToken)
	if err != nil {
		return err
	}
	if d.UserID != user.ID {
		return platform.NotFound("dialog")
	}
	return nil
}

// checkSources refuses, for a widget caller, every given context variable
// the page may not set: server variables and identity variables, which
// come only from a verified token. Server-side callers may set any.
func checkSources(widget bool, vars []botconfig.ContextVariable, given map[string]string) error {
	if !widget || len(given) == 0 {
		return nil
	}
	var ps problems
	for _, cv := range vars {
		if _, ok := given[cv.Name]; !ok {
			continue
		}
		at := "/context/" + escapePointer(cv.Name)
		switch cv.From() {
		case botconfig.SourceIdentity:
			ps.add(at, "%s comes from the signed user token's %q claim; the page cannot set it", cv.Name, cv.ClaimName())
		case botconfig.SourceServer:
			ps.add(at, "%s may be set only by server-side (sk_) callers; declare source \"page\" in the bot's config to let the widget set it", cv.Name)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Pointer < ps[j].Pointer })
	msg := ps[0].Message
	if len(ps) > 1 {
		msg = fmt.Sprintf("%d context variables may not be set by the page", len(ps))
	}
	return &platform.Error{Code: platform.CodeForbidden, Message: msg, Details: ps}
}

func forbidden(pointer, msg string) error {
	return &platform.Error{Code: platform.CodeForbidden, Message: msg, Details: []platform.Detail{{Pointer: pointer, Message: msg}}}
}

// claimString is a claim as a template value: strings as they are,
// numbers and booleans in their JSON spelling; objects, arrays and null
// are not values.
func claimString(c any) (string, bool) {
	switch v := c.(type) {
	case string:
		return v, true
	case float64, bool, json.Number:
		b, _ := json.Marshal(v)
		return string(b), true
	}
	return "", false
}

func anonymousID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return AnonymousPrefix + hex.EncodeToString(b)
}
