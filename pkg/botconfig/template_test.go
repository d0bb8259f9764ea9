package botconfig

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	lit := func(s string) segment { return segment{kind: segLiteral, text: s} }
	arg := func(s string) segment { return segment{kind: segArg, text: s} }
	v := func(s string) segment { return segment{kind: segVar, text: s} }
	tests := []struct {
		name string
		in   string
		want strTemplate
	}{
		{"plain text is one literal", "hello", strTemplate{lit("hello")}},
		{"an empty string has no segments", "", nil},
		{"an argument between literals", "a<id>b", strTemplate{lit("a"), arg("id"), lit("b")}},
		{"an argument name may hold digits, dashes and underscores", "<order_id-2>", strTemplate{arg("order_id-2")}},
		{"a variable", "{{dialog_id}}", strTemplate{v("dialog_id")}},
		{"spaces inside braces are trimmed", "{{ channel }}", strTemplate{v("channel")}},
		{"a secret", "Bearer {{secrets.crm_token}}", strTemplate{lit("Bearer "), v("secrets.crm_token")}},
		{"<< is a literal <", "a << b", strTemplate{lit("a < b")}},
		{"<<name> is a literal <name>", "<<b>", strTemplate{lit("<b>")}},
		{"{{{{ is a literal {{", "{{{{x}}", strTemplate{lit("{{x}}")}},
		{"a single brace and closing braces are plain text", `{"a": 1} }}`, strTemplate{lit(`{"a": 1} }}`)}},
		{"> alone is plain text", "a > b", strTemplate{lit("a > b")}},
		{"adjacent placeholders", "<a>{{b}}<c>", strTemplate{arg("a"), v("b"), arg("c")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTemplate(tt.in)
			if err != nil {
				t.Fatalf("parseTemplate(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseTemplate(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestEndpointTemplatesReadTheSeedsBraces(t *testing.T) {
	lit := func(s string) segment { return segment{kind: segLiteral, text: s} }
	seed := func(s string) segment { return segment{kind: segArg, text: s, brace: true} }
	v := func(s string) segment { return segment{kind: segVar, text: s} }
	tests := []struct {
		name string
		in   string
		want strTemplate
	}{
		{"{name} is an argument", "{email}", strTemplate{seed("email")}},
		{"{name} between literals", "/contacts/{id}/notes", strTemplate{lit("/contacts/"), seed("id"), lit("/notes")}},
		{"{{name}} is still a variable", "{{dialog_id}}", strTemplate{v("dialog_id")}},
		{"{{{{ is still a literal {{", "{{{{email}}", strTemplate{lit("{{email}}")}},
		{"JSON-looking text is plain text", `{"email": "x"}`, strTemplate{lit(`{"email": "x"}`)}},
		{"a brace with spaces inside is plain text", "{ email }", strTemplate{lit("{ email }")}},
		{"an unclosed brace is plain text", "{email", strTemplate{lit("{email")}},
		{"empty braces are plain text", "{}", strTemplate{lit("{}")}},
		{`\{name} is a literal {name}`, `say \{email} to {email}`, strTemplate{lit("say {email} to "), seed("email")}},
		{"a backslash elsewhere is plain text", `a\b \{ x}`, strTemplate{lit(`a\b \{ x}`)}},
		{"a variable next to an argument", "{{channel}}{email}", strTemplate{v("channel"), seed("email")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEndpointTemplate(tt.in)
			if err != nil {
				t.Fatalf("parseEndpointTemplate(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseEndpointTemplate(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
	t.Run("outside endpoints {name} is plain text", func(t *testing.T) {
		if got, _ := parseTemplate("{email}"); !reflect.DeepEqual(got, strTemplate{lit("{email}")}) {
			t.Fatalf("parseTemplate = %#v", got)
		}
	})
}

func TestParseTemplateRejectsAmbiguousText(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		offset int
		want   string
	}{
		{"a lone < in prose", "a < b", 2, `"<<"`},
		{"an argument with a space", "<order id>", 0, "must start an argument"},
		{"an argument starting with a digit", "<1st>", 0, "must start an argument"},
		{"an unclosed argument", "<id", 0, "must start an argument"},
		{"an unclosed variable", "x {{channel", 2, "not closed"},
		{"a variable with a dash", "{{user-id}}", 0, "not a variable name"},
		{"an empty variable", "{{ }}", 0, "not a variable name"},
		{"a secret without a name", "{{secrets.}}", 0, "not a variable name"},
		{"a nested variable", "{{{x}}}", 0, "not a variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTemplate(tt.in)
			te, ok := err.(*TemplateError)
			if !ok {
				t.Fatalf("parseTemplate(%q) error = %v, want a *TemplateError", tt.in, err)
			}
			if te.Offset != tt.offset || !strings.Contains(te.Msg, tt.want) {
				t.Fatalf("error = %v (offset %d), want offset %d and %q", te, te.Offset, tt.offset, tt.want)
			}
		})
	}
}
