package pii_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/parleyhq/parley/pkg/pii"
)

func all(t *testing.T, patterns ...pii.Pattern) *pii.Detector {
	t.Helper()
	d, err := pii.New(pii.Kinds, patterns)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFindRecognisesPersonalDataHoweverItIsWritten(t *testing.T) {
	t.Parallel()
	d := all(t)
	cases := []struct {
		name string
		text string
		want []string // "kind=value"
	}{
		{"an e-mail address", "write to Ann.Lee+shop@mail.example.co.uk please", []string{"email=Ann.Lee+shop@mail.example.co.uk"}},
		{"an e-mail address with a non-Latin local part", "it is jürgen@beispiel.de", []string{"email=jürgen@beispiel.de"}},
		{"a card written in groups of four with spaces", "card 4111 1111 1111 1111 thanks", []string{"card=4111111111111111"}},
		{"a card written with dashes", "4111-1111-1111-1111", []string{"card=4111111111111111"}},
		{"a card written without separators", "5500005555555559", []string{"card=5500005555555559"}},
		{"an Amex card in 4-6-5 groups", "3782 822463 10005", []string{"card=378282246310005"}},
		{"a card followed by its security code", "4111 1111 1111 1111 123", []string{"card=4111111111111111"}},
		{"a card in fullwidth digits", "４１１１ １１１１ １１１１ １１１１", []string{"card=4111111111111111"}},
		{"a card in Arabic-Indic digits", "٤١١١١١١١١١١١١١١١", []string{"card=4111111111111111"}},
		{"a card in Devanagari digits with a Unicode dash", "४१११‐११११‐११११‐११११", []string{"card=4111111111111111"}},
		{"an IBAN in groups", "IBAN DE89 3704 0044 0532 0130 00 is mine", []string{"iban=DE89370400440532013000"}},
		{"an IBAN without spaces, in lower case", "gb82west12345698765432", []string{"iban=GB82WEST12345698765432"}},
		{"an international phone number", "call +49 30 1234567 today", []string{"phone=+49 30 1234567"}},
		{"an international phone number with 00", "0044 20 7946 0958", []string{"phone=0044 20 7946 0958"}},
		{"a national number with a trunk zero", "ring 030 1234567", []string{"phone=030 1234567"}},
		{"a French national number", "06 12 34 56 78", []string{"phone=06 12 34 56 78"}},
		{"a North American number", "at (555) 123-4567 or", []string{"phone=(555) 123-4567"}},
		{"a North American number with dots", "555.123.4567", []string{"phone=555.123.4567"}},
		{"several kinds in one text", "me@x.io, 4111111111111111, +1 415 555 2671",
			[]string{"email=me@x.io", "card=4111111111111111", "phone=+1 415 555 2671"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, m := range d.Find(tc.text) {
				got = append(got, m.Kind+"="+m.Value)
				if m.Start < 0 || m.End > len(tc.text) || m.Start >= m.End {
					t.Fatalf("span %d..%d out of %q", m.Start, m.End, tc.text)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Find(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestFindLeavesOrdinaryNumbersAlone(t *testing.T) {
	t.Parallel()
	d := all(t)
	for _, text := range []string{
		"order 123456789 shipped",                 // a bare run of digits
		"4111 1111 1111 1112",                     // fails Luhn
		"DE89 3704 0044 0532 0130 02",             // fails mod-97
		"on 2024-01-15 at 10:30",                  // a date
		"version 1.2.3 of 12.05.2024",             // dotted numbers
		"the answer is 42, not 4 2",               // small numbers
		"no@ta",                                   // no domain
		"ticket 20240115103000",                   // 14 digits, no 0 or +
		"temperatures 12 14 16 18 20 22 24 26 28", // spaced numbers
	} {
		if got := d.Find(text); len(got) != 0 {
			t.Errorf("Find(%q) = %+v, want nothing", text, got)
		}
	}
}

func TestOnlyTheKindsAskedForAreFound(t *testing.T) {
	t.Parallel()
	d, err := pii.New([]string{pii.KindEmail}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Find("a@b.co 4111111111111111 +49 30 1234567")
	if len(got) != 1 || got[0].Kind != pii.KindEmail {
		t.Fatalf("Find = %+v, want the e-mail only", got)
	}
	if _, err := pii.New([]string{"passport"}, nil); err == nil {
		t.Fatal("an unknown kind was accepted")
	}
	if d, _ := pii.New(nil, nil); d.Find("a@b.co") != nil {
		t.Fatal("a detector without kinds found something")
	}
}

func TestTenantPatternsAreFoundAndRefusedWhenTheyMatchNothing(t *testing.T) {
	t.Parallel()
	p, err := pii.CompilePattern("customer_id", `\bCUST-\d{6}\b`)
	if err != nil {
		t.Fatal(err)
	}
	d := all(t, p)
	v := pii.NewVault()
	if got := v.Mask(d, "I am CUST-123456, mail a@b.co"); got != "I am <CUSTOMER_ID_1>, mail <EMAIL_1>" {
		t.Fatalf("Mask = %q", got)
	}
	for _, expr := range []string{`a*`, `(unclosed`, `(?=lookahead)`} {
		if _, err := pii.CompilePattern("x", expr); err == nil {
			t.Errorf("CompilePattern(%q) was accepted", expr)
		}
	}
}

func TestTheVaultGivesTheSameValueTheSamePlaceholderAndBack(t *testing.T) {
	t.Parallel()
	d := all(t)
	v := pii.NewVault()
	first := v.Mask(d, "mail ann@example.com, card 4111 1111 1111 1111")
	if first != "mail <EMAIL_1>, card <CARD_1>" {
		t.Fatalf("Mask = %q", first)
	}
	second := v.Mask(d, "again ann@example.com and 4111-1111-1111-1111, and bob@example.com")
	if second != "again <EMAIL_1> and <CARD_1>, and <EMAIL_2>" {
		t.Fatalf("Mask = %q", second)
	}
	if got := v.Unmask("look up <EMAIL_2> and <EMAIL_1>, not <EMAIL_9>"); got != "look up bob@example.com and ann@example.com, not <EMAIL_9>" {
		t.Fatalf("Unmask = %q", got)
	}
	args := v.UnmaskJSON(json.RawMessage(`{"email":"<EMAIL_1>","cards":["\u003cCARD_1\u003e"],"n":3}`))
	var back struct {
		Email string   `json:"email"`
		Cards []string `json:"cards"`
		N     int      `json:"n"`
	}
	if err := json.Unmarshal(args, &back); err != nil {
		t.Fatal(err)
	}
	if back.Email != "ann@example.com" || back.Cards[0] != "4111111111111111" || back.N != 3 {
		t.Fatalf("UnmaskJSON = %s", args)
	}

	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := pii.LoadVault(data)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Changed() {
		t.Fatal("a loaded vault says it changed")
	}
	if got := loaded.Mask(d, "bob@example.com"); got != "<EMAIL_2>" || loaded.Changed() {
		t.Fatalf("a loaded vault masks as %q (changed %v), want the same placeholder", got, loaded.Changed())
	}
	if got := loaded.Mask(d, "cy@example.com"); got != "<EMAIL_3>" || !loaded.Changed() {
		t.Fatalf("a new value after loading is %q (changed %v)", got, loaded.Changed())
	}
}

func TestRedactUsesOneMaskPerKind(t *testing.T) {
	t.Parallel()
	got := all(t).Redact("from a@b.co paid with 4111111111111111 via DE89370400440532013000")
	if got != "from [email] paid with [card] via [iban]" {
		t.Fatalf("Redact = %q", got)
	}
}

// FuzzMask checks that no text makes masking panic or lose text around
// the data, and that a card number put in any text is never left in it.
func FuzzMask(f *testing.F) {
	f.Add("pay ", " now", 0)
	f.Add("٤١", "@x.io", 1)
	f.Add("+49 ", " 0", 2)
	f.Fuzz(func(t *testing.T, before, after string, spelling int) {
		d, _ := pii.New(pii.Kinds, nil)
		v := pii.NewVault()
		_ = v.Unmask(v.Mask(d, before+after))
		spellings := []string{"4111111111111111", "4111 1111 1111 1111", "4111-1111-1111-1111", "４１１１１１１１１１１１１１１１"}
		card := spellings[uint(spelling)%uint(len(spellings))]
		// A digit, letter or separator next to the card makes it a
		// different number; the fuzzer's other texts keep it apart.
		text := before + " " + card + " " + after
		if strings.IndexFunc(before+after, unicode.IsDigit) >= 0 {
			return
		}
		masked := v.Mask(d, text)
		if strings.Contains(masked, card) {
			t.Fatalf("the card survives in %q", masked)
		}
	})
}
