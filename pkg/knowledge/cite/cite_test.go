package cite_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/knowledge/cite"
)

func passages() []cite.Passage {
	return []cite.Passage{
		{Source: "src_a", Title: "Refunds", Locator: "Policies > Refunds", URL: "https://help.example/refunds", Text: "Refunds take 5 days."},
		{Source: "src_b", Title: "Plans", Locator: "p. 3", Text: "Plan B costs 9 euros."},
	}
}

func TestFormatNumbersPassagesAndKeepsANumberForThePassageFoundAgain(t *testing.T) {
	b := cite.NewBook()
	got := b.Format(passages(), 0)
	want := "[1] Refunds (Policies > Refunds) https://help.example/refunds\nRefunds take 5 days.\n\n[2] Plans (p. 3)\nPlan B costs 9 euros.\n"
	if got != want {
		t.Fatalf("Format:\n%q\nwant\n%q", got, want)
	}
	again := b.Format([]cite.Passage{{Source: "src_c", Title: "New"}, passages()[1]}, 0)
	if !strings.HasPrefix(again, "[3] New") || !strings.Contains(again, "[2] Plans") {
		t.Fatalf("second search: %q", again)
	}
}

func TestFormatLeavesOutWholePassagesPastTheBudget(t *testing.T) {
	b := cite.NewBook()
	got := b.Format(passages(), 90)
	if !strings.Contains(got, "[1] Refunds") || strings.Contains(got, "Plan B") {
		t.Fatalf("Format within 90 chars: %q", got)
	}
}

func TestCitedKeepsTheMarkersTheTextUsesInOrder(t *testing.T) {
	b := cite.NewBook()
	b.Format(passages(), 0)
	tests := []struct {
		name, text string
		want       []int
	}{
		{"no markers", "Refunds take 5 days.", nil},
		{"first appearance order, once each", "Plan B [2] and refunds [1][2].", []int{2, 1}},
		{"numbers never given are left out", "See [7] and [1].", []int{1}},
		{"other brackets are not markers", "An array [0] or [x] or [1234].", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, c := range b.Cited(tc.text) {
				got = append(got, c.N)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Cited(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
	c := b.Cited("[1]")[0]
	if c != (cite.Citation{N: 1, Source: "src_a", Title: "Refunds", URL: "https://help.example/refunds", Locator: "Policies > Refunds"}) {
		t.Fatalf("citation: %+v", c)
	}
}

func TestMarkersFindsAMarkerSplitAcrossDeltasOnce(t *testing.T) {
	b := cite.NewBook()
	b.Format(passages(), 0)
	m := cite.NewMarkers(b)
	var got []int
	for _, d := range []string{"Refunds take 5 days [", "1", "]. Plans [2", "]; again [1]."} {
		for _, c := range m.Add(d) {
			got = append(got, c.N)
		}
	}
	if !reflect.DeepEqual(got, []int{1, 2}) {
		t.Fatalf("markers = %v", got)
	}
}

func TestLinkPointsAtThePageOrAnchor(t *testing.T) {
	tests := []struct{ url, locator, want string }{
		{"https://x.example/a.pdf", "Guide, pp. 3-4", "https://x.example/a.pdf#page=3"},
		{"https://x.example/a.pdf", "p. 7", "https://x.example/a.pdf#page=7"},
		{"https://x.example/doc", "Install > Linux, #linux", "https://x.example/doc#linux"},
		{"https://x.example/doc", "Install", "https://x.example/doc"},
		{"", "p. 3", ""},
	}
	for _, tc := range tests {
		if got := cite.Link(tc.url, tc.locator); got != tc.want {
			t.Errorf("Link(%q, %q) = %q, want %q", tc.url, tc.locator, got, tc.want)
		}
	}
}

func TestABookAfterTheHistoryNumbersPastItsMarkers(t *testing.T) {
	last := cite.LastMarker("Refunds take 5 days [1][3].", "[1] Refunds\nRefunds take 5 days.", "no markers")
	if last != 3 {
		t.Fatalf("LastMarker = %d", last)
	}
	b := cite.NewBookAfter(last)
	if got := b.Format(passages()[:1], 0); !strings.HasPrefix(got, "[4] Refunds") {
		t.Fatalf("Format: %q", got)
	}
	if cits := b.Cited("old [1], [3] and new [4]"); len(cits) != 1 || cits[0].N != 4 || cits[0].Source != "src_a" {
		t.Fatalf("Cited: %+v", cits)
	}
}

func TestAnUploadsLinkIsItsCitationsURLAtThePassagesPageAndNotShownToTheModel(t *testing.T) {
	b := cite.NewBook()
	upload := cite.Passage{Source: "src_f", Title: "manual.pdf", Locator: "Poles, p. 3", Link: "/v1/knowledge/files/tok", Text: "Splint it."}
	if got := b.Format([]cite.Passage{upload}, 0); strings.Contains(got, "/v1/knowledge/files/") {
		t.Errorf("the model reads the link: %q", got)
	}
	c, ok := b.Lookup(1)
	if !ok || c.URL != "/v1/knowledge/files/tok#page=3" {
		t.Errorf("citation %+v, want the link at #page=3", c)
	}
}
