package platform_test

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkSaveVersionWithSecret is one saved version that sends a secret,
// in a tenant of 50 published bots: by an admin (no check), by an editor
// whose bot's own published version approves the pair (one version read),
// and by an editor whose pair only the last bot approves (every published
// version read and compiled), the check's worst case.
//
//	go test -run '^$' -bench BenchmarkSaveVersionWithSecret -benchmem ./pkg/platform
func BenchmarkSaveVersionWithSecret(b *testing.B) {
	const bots = 50
	for _, be := range storetest.Open(b) {
		svc := platformtest.New(b, be.Store, platform.Options{
			Sealer: mustSealer(b), Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost},
		})
		e := &env{svc: svc, store: be.Store, clock: platformtest.NewClock(time.Now())}
		tn, key, err := svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: "bench", Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		admin, err := svc.Auth().Authenticate(ctx, key.Key)
		if err != nil {
			b.Fatal(err)
		}
		for i := range bots {
			url := crmURL
			if i == bots-1 {
				url = "https://last.example.com/c"
			}
			bt, _, err := svc.Bots().Create(ctx, admin, tn.ID, fmt.Sprintf("bot-%02d", i), []byte(crmConfig(url, "Warm")))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.Versions().Publish(ctx, admin, tn.ID, bt.ID, 1); err != nil {
				b.Fatal(err)
			}
		}
		editor := e.member(b, tn.ID, auth.RoleEditor)
		cases := []struct {
			name   string
			caller *platform.Principal
			url    string
		}{
			{"admin", admin, crmURL},
			{"editor/approved_by_its_own_bot", editor, crmURL},
			{"editor/approved_by_the_last_bot", editor, "https://last.example.com/c"},
		}
		for _, c := range cases {
			b.Run(be.Name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					n++
					cfg := crmConfig(c.url, fmt.Sprintf("tone %d", n))
					if _, _, err := svc.Versions().Create(ctx, c.caller, tn.ID, "bot-00", []byte(cfg)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
