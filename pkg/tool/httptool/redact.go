package httptool

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// minRedactLen skips secret values too short to scrub without mangling
// ordinary text; RenderedRequest.Redact still scrubs the ones a request used.
const minRedactLen = 4

// redactor scrubs every tenant secret in the dialog's vars from text, in the
// forms a server may echo it: raw, URL-escaped and JSON-escaped. It covers
// secrets the request did not use too, because a tenant's own API may
// return them (a "whoami" endpoint echoing the token).
type redactor struct {
	replacer *strings.Replacer
}

func newRedactor(vars botconfig.Vars) *redactor {
	var forms []string
	for key, value := range vars {
		if !strings.HasPrefix(key, botconfig.SecretPrefix) || len(value) < minRedactLen {
			continue
		}
		forms = append(forms, value, url.PathEscape(value), url.QueryEscape(value), jsonEscaped(value, true), jsonEscaped(value, false))
	}
	if len(forms) == 0 {
		return &redactor{}
	}
	// Longest first, so a secret containing another is scrubbed whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, "[redacted]")
	}
	return &redactor{replacer: strings.NewReplacer(pairs...)}
}

// redact scrubs s; rendered may be nil when rendering failed.
func (r *redactor) redact(s string, rendered *botconfig.RenderedRequest) string {
	if r.replacer != nil {
		s = r.replacer.Replace(s)
	}
	return rendered.Redact(s)
}

// jsonEscaped is value as it appears inside a JSON string.
func jsonEscaped(value string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(value)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}
