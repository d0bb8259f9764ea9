package platform_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
)

func TestBotsAndVersions(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		bot, v1, err := e.svc.Bots().Create(ctx, admin, tn.Slug, "support", []byte(configV1))
		if err != nil {
			t.Fatal(err)
		}
		t.Run("a new bot starts at version 1, named by its config, unpublished", func(t *testing.T) {
			if v1.Number != 1 || bot.Name != "Support" || bot.PublishedVersion != 0 || v1.Prompt == "" || v1.Fingerprint == "" {
				t.Fatalf("bot %+v, version %+v", bot, v1)
			}
			if v1.CreatedBy != admin.KeyID {
				t.Fatalf("created by %q, want the key %q", v1.CreatedBy, admin.KeyID)
			}
		})
		t.Run("saving the same config again creates nothing", func(t *testing.T) {
			v, created, err := e.svc.Versions().Create(ctx, admin, tn.Slug, "support", []byte(configV1))
			if err != nil || created || v.Number != 1 || v.ID != v1.ID {
				t.Fatalf("version %+v, created %v, %v", v, created, err)
			}
		})
		t.Run("a changed config becomes version 2", func(t *testing.T) {
			v, created, err := e.svc.Versions().Create(ctx, admin, tn.Slug, bot.ID, []byte(configV2))
			if err != nil || !created || v.Number != 2 {
				t.Fatalf("version %+v, created %v, %v", v, created, err)
			}
		})
		t.Run("going back to an older config is a new version, not a reuse", func(t *testing.T) {
			v, created, err := e.svc.Versions().Create(ctx, admin, tn.Slug, bot.ID, []byte(configV1))
			if err != nil || !created || v.Number != 3 {
				t.Fatalf("version %+v, created %v, %v", v, created, err)
			}
		})
		t.Run("an invalid config reports every problem with its pointer", func(t *testing.T) {
			_, _, err := e.svc.Versions().Create(ctx, admin, tn.Slug, bot.ID, []byte(configBad))
			wantInvalid(t, err, "/basic_settings/name", "/bogus")
			_, _, err = e.svc.Bots().Create(ctx, admin, tn.Slug, "broken", []byte(configBad))
			wantInvalid(t, err, "/basic_settings/name", "/bogus")
		})
		t.Run("an invalid bot is not created", func(t *testing.T) {
			_, err := e.svc.Bots().Get(ctx, admin, tn.Slug, "broken")
			wantCode(t, err, platform.CodeNotFound)
		})
		t.Run("versions list in order and one can be fetched by number", func(t *testing.T) {
			vs, next, err := e.svc.Versions().List(ctx, admin, tn.Slug, "support", platform.ListOptions{})
			if err != nil || len(vs) != 3 || next != "" || vs[0].Number != 1 || vs[2].Number != 3 {
				t.Fatalf("versions %d, next %q, %v", len(vs), next, err)
			}
			v2, err := e.svc.Versions().Get(ctx, admin, tn.Slug, "support", 2)
			if err != nil || string(v2.Config) != configV2 {
				t.Fatalf("version 2 %+v, %v", v2, err)
			}
		})
		t.Run("publishing and rolling back move the live version", func(t *testing.T) {
			for _, n := range []int{2, 1, 3} {
				b, err := e.svc.Versions().Publish(ctx, admin, tn.Slug, "support", n)
				if err != nil || b.PublishedVersion != n {
					t.Fatalf("publish %d: %+v, %v", n, b, err)
				}
				got, _ := e.svc.Bots().Get(ctx, admin, tn.Slug, "support")
				if got.PublishedVersion != n {
					t.Fatalf("bot shows version %d live after publishing %d", got.PublishedVersion, n)
				}
			}
		})
		t.Run("publishing a version that does not exist is not found", func(t *testing.T) {
			_, err := e.svc.Versions().Publish(ctx, admin, tn.Slug, "support", 42)
			wantCode(t, err, platform.CodeNotFound)
		})
		t.Run("a second bot with the same slug is a conflict", func(t *testing.T) {
			_, _, err := e.svc.Bots().Create(ctx, admin, tn.Slug, "support", []byte(configV1))
			wantCode(t, err, platform.CodeConflict)
		})
		t.Run("a bad bot slug is invalid", func(t *testing.T) {
			_, _, err := e.svc.Bots().Create(ctx, admin, tn.Slug, "Bot_1", []byte(configV1))
			wantInvalid(t, err, "/slug")
		})
	})
}

func TestConcurrentVersionsGetDistinctNumbers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		e.bot(t, admin, tn.Slug, "support")
		const writers = 3
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Go(func() {
				cfg := fmt.Sprintf(`{"basic_settings":{"name":"Support %d"}}`, i)
				_, _, err := e.svc.Versions().Create(ctx, admin, tn.Slug, "support", []byte(cfg))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		vs, _, err := e.svc.Versions().List(ctx, admin, tn.Slug, "support", platform.ListOptions{})
		if err != nil || len(vs) != writers+1 {
			t.Fatalf("versions %d, %v", len(vs), err)
		}
		for i, v := range vs {
			if v.Number != i+1 {
				t.Fatalf("version numbers %v are not 1..%d", vs, writers+1)
			}
		}
	})
}
