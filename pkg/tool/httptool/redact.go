package httptool

import (
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/redact"
)

// minRedactLen skips secret values too short to scrub without mangling
// ordinary text; RenderedRequest.Redact still scrubs the ones a request used.
const minRedactLen = 4

// redactor scrubs every tenant secret in the dialog's vars from text, in
// every form a server may echo it (pkg/redact). It covers secrets the
// request did not use too, because a tenant's own API may return them (a
// "whoami" endpoint echoing the token).
type redactor struct {
	secrets *redact.Redactor
}

func newRedactor(vars botconfig.Vars) *redactor {
	var secrets []string
	for key, value := range vars {
		if strings.HasPrefix(key, botconfig.SecretPrefix) && len(value) >= minRedactLen {
			secrets = append(secrets, value)
		}
	}
	return &redactor{secrets: redact.New(secrets...)}
}

// redact scrubs s; rendered may be nil when rendering failed.
func (r *redactor) redact(s string, rendered *botconfig.RenderedRequest) string {
	return rendered.Redact(r.secrets.Redact(s))
}
