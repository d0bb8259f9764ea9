// Package pii finds personal data in text (e-mail addresses, phone
// numbers, payment card numbers, IBANs and tenant-defined patterns) and
// masks it, either with a fixed mask per kind (for logs) or with stable
// placeholders such as <EMAIL_1> kept in a Vault, so the real value can be
// put back where it is needed (the arguments of a tool call).
//
// It is a different subject from pkg/redact, which scrubs the platform's
// own secrets (API keys, tokens) in every encoding a server may echo them.
// Here the values belong to end users, and what matters is recognising
// them in free text however people write them:
//
//	d, err := pii.New([]string{"email", "card"}, nil)
//	v := pii.NewVault()
//	masked := v.Mask(d, "mail me at ann@example.com") // "mail me at <EMAIL_1>"
//	v.Unmask(masked)                                  // "mail me at ann@example.com"
//
// Digits written in another script (fullwidth, Arabic-Indic, Devanagari,
// ...) and fullwidth letters are read as their ASCII look-alikes before
// matching, so "４１１１ １１１１ …" is a card like any other. Card numbers
// must pass the Luhn check and IBANs the mod-97 check, so order numbers and
// dates are not taken for them. Phone numbers are recognised in
// international form (+ or 00 and 8 to 15 digits) and in common national
// forms (a leading 0 with 9 to 11 digits, or the North American
// (555) 123-4567 shapes). Tenant patterns are RE2 regular expressions, so
// no pattern can take more than linear time.
package pii
