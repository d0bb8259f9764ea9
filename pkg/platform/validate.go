package platform

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// slugPattern keeps slugs URL-safe and without "_", so a slug can never look
// like an id ("ten_…", "bot_…") and a reference is unambiguous.
var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// secretNamePattern matches what {{secrets.NAME}} may reference in configs.
var secretNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// problems collects request problems so all of them are reported at once.
type problems []Detail

func (ps *problems) add(pointer, format string, args ...any) {
	*ps = append(*ps, Detail{Pointer: pointer, Message: fmt.Sprintf(format, args...)})
}

// err returns nil when nothing was wrong, else an invalid Error.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return Invalid(ps...)
}

func (ps *problems) slug(pointer, slug string) {
	if !slugPattern.MatchString(slug) {
		ps.add(pointer, "must be 1-63 lowercase letters, digits or hyphens, starting with a letter or digit")
	}
}

func (ps *problems) name(pointer, name string, max int) {
	switch n := utf8.RuneCountInString(strings.TrimSpace(name)); {
	case n == 0:
		ps.add(pointer, "is required")
	case n > max:
		ps.add(pointer, "must have at most %d characters", max)
	}
}

// ValidSlug reports whether s is a valid tenant or bot slug, so tools like
// parley apply can check files before writing anything.
func ValidSlug(s string) bool { return slugPattern.MatchString(s) }

// ValidSecretName reports whether s is a valid tenant secret name.
func ValidSecretName(s string) bool { return secretNamePattern.MatchString(s) }
