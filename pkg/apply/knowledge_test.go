package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/platform"
)

// baseState is a knowledge base and its sources as both targets show
// them; each source is "kind name hash title tags refresh", sorted.
type baseState struct {
	Name      string
	Embedding string
	Sources   []string
}

// kindText is the kind of a source made of a text, which apply never
// makes: here one is added by hand.
const kindText = "text"

func apiText(title, text string) apiclient.AddSourceRequest {
	return apiclient.AddSourceRequest{Title: title, Text: text}
}

// knowledgeState reads the tenant's bases through target, and the ids of
// their sources.
func knowledgeState(t *testing.T, target Target, tenant string) (map[string]baseState, []string) {
	t.Helper()
	ctx := context.Background()
	bases, err := target.knowledgeBases(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]baseState{}
	var ids []string
	for _, b := range bases {
		srcs, err := target.knowledgeSources(ctx, tenant, b.slug)
		if err != nil {
			t.Fatal(err)
		}
		st := baseState{Name: b.name, Embedding: describeEmbedding(b.embedding), Sources: []string{}}
		for _, s := range srcs {
			st.Sources = append(st.Sources, fmt.Sprintf("%s %s %s %q %v %s", s.kind, sourceName(s), s.hash, s.title, s.tags, s.refresh))
			ids = append(ids, s.id)
		}
		sort.Strings(st.Sources)
		out[b.slug] = st
	}
	sort.Strings(ids)
	return out, ids
}

// helpCenter writes a tenant with two knowledge bases: help-center, with
// a name, an embedding, tagged documents of three formats and two pages;
// and manuals, a bare directory of one document.
func helpCenter(t *testing.T) string {
	dir := t.TempDir()
	acme := filepath.Join(dir, "acme")
	applytest.WriteFile(t, filepath.Join(acme, "tenant.json"), `{"name": "Acme"}`)
	kb := filepath.Join(acme, "knowledge", "help-center")
	applytest.WriteFile(t, filepath.Join(kb, "knowledge.json"), `{"name": "Help Center", "embedding": {"provider": "openai", "model": "text-embedding-3-small"},
 "files": {"faq.md": {"title": "Frequently asked", "tags": ["faq"]}}}`)
	applytest.WriteFile(t, filepath.Join(kb, "faq.md"), "# Shipping\n\nWe ship to every EU country.\n")
	applytest.WriteFile(t, filepath.Join(kb, "refunds.txt"), "Refunds take five business days.\n")
	applytest.WriteFile(t, filepath.Join(kb, "qa.csv"), "question,answer\nDo you ship abroad?,Yes.\n")
	applytest.WriteFile(t, filepath.Join(kb, "sources.json"), `{"sources": [
 {"url": "http://127.0.0.1:9/returns", "tags": ["policy"], "refresh": "24h"},
 {"sitemap": "http://127.0.0.1:9/sitemap.xml"}]}`)
	applytest.WriteFile(t, filepath.Join(acme, "knowledge", "manuals", "tent.md"), "Pitch the tent with the door downwind.\n")
	return dir
}

func TestApplyKnowledgeBasesAlikeToTheDatabaseAndThroughTheServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tg *targets) {
		dir := helpCenter(t)
		kb := filepath.Join(dir, "acme", "knowledge", "help-center")
		wantOutput := func(t *testing.T, outs []string, wants ...string) {
			t.Helper()
			for _, out := range outs {
				for _, w := range wants {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
			}
		}
		compare := func(t *testing.T) (map[string]baseState, [2][]string) {
			t.Helper()
			db, dbIDs := knowledgeState(t, tg.db, "acme")
			viaServer, srvIDs := knowledgeState(t, tg.api, "acme")
			if !reflect.DeepEqual(db, viaServer) {
				t.Fatalf("the database holds\n%+v\nthe server holds\n%+v", db, viaServer)
			}
			return db, [2][]string{dbIDs, srvIDs}
		}

		outs := tg.applyBoth(t, dir, Options{})
		wantOutput(t, outs, "knowledge base help-center: created (embedding openai/text-embedding-3-small)",
			"knowledge base manuals: created (keyword search only)", "knowledge base help-center: source faq.md: added",
			"knowledge base help-center: source http://127.0.0.1:9/returns: added", "6 knowledge sources added or replaced")
		state, ids := compare(t)
		help := state["help-center"]
		if help.Name != "Help Center" || len(help.Sources) != 5 || len(state["manuals"].Sources) != 1 {
			t.Fatalf("after the first apply: %+v", state)
		}
		for _, want := range []string{`file faq.md sha256:`, `"Frequently asked" [faq] 0s`, `url http://127.0.0.1:9/returns`, `[policy] 24h0m0s`, `sitemap http://127.0.0.1:9/sitemap.xml`} {
			if !strings.Contains(strings.Join(help.Sources, "\n"), want) {
				t.Errorf("help-center's sources lack %q:\n%s", want, strings.Join(help.Sources, "\n"))
			}
		}

		t.Run("a second apply changes nothing", func(t *testing.T) {
			outs := tg.applyBoth(t, dir, Options{})
			wantOutput(t, outs, "knowledge base help-center: 5 source(s) unchanged", "knowledge base manuals: 1 source(s) unchanged",
				"0 providers, webhooks and settings changed, 0 knowledge sources added or replaced, 0 deleted")
			if _, again := compare(t); !reflect.DeepEqual(again, ids) {
				t.Errorf("sources were replaced: ids %v, then %v", ids, again)
			}
		})

		// The edits: faq.md's content, refunds.txt's tags, the returns
		// page's refresh, the base's name; qa.csv and the manuals base
		// are gone, and a hand-made source is in the base.
		applytest.WriteFile(t, filepath.Join(kb, "faq.md"), "# Shipping\n\nWe ship worldwide.\n")
		applytest.WriteFile(t, filepath.Join(kb, "knowledge.json"), `{"name": "Help centre", "embedding": {"provider": "openai", "model": "text-embedding-3-small"},
 "files": {"faq.md": {"title": "Frequently asked", "tags": ["faq"]}, "refunds.txt": {"tags": ["billing"]}}}`)
		applytest.WriteFile(t, filepath.Join(kb, "sources.json"), `{"sources": [
 {"url": "http://127.0.0.1:9/returns", "tags": ["policy"]},
 {"sitemap": "http://127.0.0.1:9/sitemap.xml"}]}`)
		os.Remove(filepath.Join(kb, "qa.csv"))
		os.RemoveAll(filepath.Join(dir, "acme", "knowledge", "manuals"))
		if _, _, err := tg.dbSvc.Knowledge().AddSource(context.Background(), platform.Operator(), "acme", "help-center",
			platform.SourceInput{Kind: kindText, Title: "Note", Content: []byte("Added by hand.")}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tg.api.c.AddSource(context.Background(), "acme", "help-center", apiText("Note", "Added by hand.")); err != nil {
			t.Fatal(err)
		}

		t.Run("a dry run shows what changed, per base, and writes nothing", func(t *testing.T) {
			before, beforeIDs := compare(t)
			outs := []string{tg.apply(t, tg.db, dir, Options{DryRun: true, Prune: true}), tg.apply(t, tg.api, dir, Options{DryRun: true, Prune: true})}
			wantOutput(t, outs, `knowledge base help-center: would be renamed "Help centre"`,
				"knowledge base help-center: source faq.md: changed (content); would be replaced",
				"knowledge base help-center: source refunds.txt: changed (tags); would be replaced",
				"knowledge base help-center: source http://127.0.0.1:9/returns: changed (refresh); would be replaced",
				"knowledge base help-center: source qa.csv: not in the directory; would be deleted",
				`knowledge base help-center: source "Note" (text): not in the directory; would be deleted`,
				"knowledge base manuals: not in the directory; would be deleted",
				"knowledge base help-center: 1 source(s) unchanged")
			if after, afterIDs := compare(t); !reflect.DeepEqual(after, before) || !reflect.DeepEqual(afterIDs, beforeIDs) {
				t.Errorf("a dry run changed the bases:\n%+v\n%+v", before, after)
			}
		})
		t.Run("without --prune, what the directory lost stays", func(t *testing.T) {
			wantOutput(t, tg.applyBoth(t, dir, Options{}), "knowledge base help-center: source faq.md: changed (content); replaced",
				"knowledge base help-center: source refunds.txt: changed (tags); replaced", `knowledge base help-center: renamed "Help centre"`)
			state, _ := compare(t)
			if len(state["help-center"].Sources) != 6 || len(state["manuals"].Sources) != 1 {
				t.Fatalf("%+v", state)
			}
		})
		t.Run("with --prune, the sources and bases the directory lost are deleted", func(t *testing.T) {
			wantOutput(t, tg.applyBoth(t, dir, Options{Prune: true}), "knowledge base help-center: source qa.csv: not in the directory; deleted",
				"knowledge base manuals: not in the directory; deleted", "knowledge base help-center: 4 source(s) unchanged")
			state, _ := compare(t)
			want := []string{"file faq.md", "file refunds.txt", "sitemap http://127.0.0.1:9/sitemap.xml", "url http://127.0.0.1:9/returns"}
			var got []string
			for _, s := range state["help-center"].Sources {
				got = append(got, strings.Join(strings.Fields(s)[:2], " "))
			}
			if _, ok := state["manuals"]; ok || !reflect.DeepEqual(got, want) || state["help-center"].Name != "Help centre" {
				t.Fatalf("after --prune: %+v", state)
			}
			if !strings.Contains(strings.Join(state["help-center"].Sources, "\n"), `"refunds.txt" [billing]`) {
				t.Errorf("refunds.txt's tags: %v", state["help-center"].Sources)
			}
		})
	})
}

// A tenant without a knowledge/ directory keeps the bases made by hand,
// even with --prune; a base whose embedding the files change is a failure
// that rolls the tenant back in the database.
func TestApplyLeavesKnowledgeAloneWithoutADirectoryAndRefusesANewEmbedding(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tg *targets) {
		dir := helpCenter(t)
		tg.apply(t, tg.db, dir, Options{})
		knowledge := filepath.Join(dir, "acme", "knowledge")
		moved := filepath.Join(t.TempDir(), "knowledge")
		if err := os.Rename(knowledge, moved); err != nil {
			t.Fatal(err)
		}
		if out := tg.apply(t, tg.db, dir, Options{Prune: true}); strings.Contains(out, "knowledge base") {
			t.Errorf("apply --prune without knowledge/ touched the bases:\n%s", out)
		}
		if state, _ := knowledgeState(t, tg.db, "acme"); len(state) != 2 {
			t.Fatalf("bases after --prune without knowledge/: %+v", state)
		}
		if err := os.Rename(moved, knowledge); err != nil {
			t.Fatal(err)
		}
		applytest.WriteFile(t, filepath.Join(knowledge, "help-center", "knowledge.json"), `{"name": "Help Center"}`)
		applytest.WriteFile(t, filepath.Join(knowledge, "manuals", "care.md"), "Dry the tent before you pack it.\n")
		out, errs, stats := tg.run(t, tg.db, dir, Options{})
		if stats.Failed != 1 || !strings.Contains(errs, "the base embeds with embedding openai/text-embedding-3-small; a base's embedding cannot change") ||
			!strings.Contains(out, "tenant acme: not applied") {
			t.Fatalf("failed %d\n%s%s", stats.Failed, out, errs)
		}
		if state, _ := knowledgeState(t, tg.db, "acme"); len(state["manuals"].Sources) != 1 {
			t.Errorf("the failed tenant's other changes were not rolled back: %+v", state["manuals"])
		}
	})
}

func TestReadingAKnowledgeDirectoryReportsEveryProblem(t *testing.T) {
	t.Parallel()
	dir := helpCenter(t)
	kb := filepath.Join(dir, "acme", "knowledge", "help-center")
	applytest.WriteFile(t, filepath.Join(kb, "copy.md"), "# Shipping\n\nWe ship to every EU country.\n")
	applytest.WriteFile(t, filepath.Join(kb, "empty.txt"), "")
	applytest.WriteFile(t, filepath.Join(kb, "nested", "a.md"), "a")
	applytest.WriteFile(t, filepath.Join(kb, "knowledge.json"), `{"name": "Help", "embedding": {"provider": "openai"},
 "files": {"faq.md": {"tags": ["a,b", " padded"]}, "gone.md": {}}}`)
	applytest.WriteFile(t, filepath.Join(kb, "sources.json"), `{"sources": [
 {"url": "http://127.0.0.1:9/a", "sitemap": "http://127.0.0.1:9/s.xml"},
 {"url": "ftp://example.com/a"},
 {"url": "http://127.0.0.1:9/b", "refresh": "5m"},
 {"url": "http://127.0.0.1:9/b", "refresh": "daily"}]}`)
	applytest.WriteFile(t, filepath.Join(dir, "acme", "knowledge", "Bad_Slug", "a.md"), "a")
	applytest.WriteFile(t, filepath.Join(dir, "acme", "knowledge", "stray.md"), "a")
	applytest.WriteFile(t, filepath.Join(dir, "acme", "knowledge", "other", "knowledge.json"), `{"name": "Other", "colour": "red"}`)
	_, problems := ReadDir(dir, func(string) string { return "" }, botconfig.Options{})
	got := map[string]bool{}
	for _, p := range problems {
		rel, _ := filepath.Rel(dir, p.File)
		got[rel+" "+p.Pointer] = true
	}
	for _, want := range []string{
		"acme/knowledge/help-center/faq.md -", "acme/knowledge/help-center/empty.txt -", "acme/knowledge/help-center/nested -",
		"acme/knowledge/help-center/knowledge.json /embedding", "acme/knowledge/help-center/knowledge.json /files/faq.md/tags/0",
		"acme/knowledge/help-center/knowledge.json /files/faq.md/tags/1", "acme/knowledge/help-center/knowledge.json /files/gone.md",
		"acme/knowledge/help-center/sources.json /sources/0", "acme/knowledge/help-center/sources.json /sources/1/url",
		"acme/knowledge/help-center/sources.json /sources/2/refresh", "acme/knowledge/help-center/sources.json /sources/3/url",
		"acme/knowledge/help-center/sources.json /sources/3/refresh", "acme/knowledge/Bad_Slug -", "acme/knowledge/stray.md -",
		"acme/knowledge/other/knowledge.json -",
	} {
		if !got[want] {
			t.Errorf("no problem at %s", want)
		}
	}
	if len(problems) != 15 {
		t.Errorf("%d problems, want 15:\n%v", len(problems), problems)
	}
}
