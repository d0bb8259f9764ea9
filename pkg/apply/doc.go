// Package apply is the GitOps engine of `parley apply`: it makes a Parley
// match a directory laid out like tenants/ (docs/gitops.md).
//
// ReadDir reads and checks every file of the directory first and returns
// each problem at once; Run then applies the checked tenants to a Target,
// one tenant at a time, printing what changed:
//
//	tenants, problems := apply.ReadDir(dir, os.Getenv, botconfig.Options{})
//	// report problems and stop when there are any
//	stats, err := apply.Run(ctx, apply.Database(svc, platform.Operator()), tenants,
//		apply.Options{Out: os.Stdout, Err: os.Stderr, DryRun: dryRun, Prune: prune})
//
// A Target is the database through the platform service (Database, one
// transaction per tenant) or a running server through its API (Server).
// Both make the same calls, so both leave the same state, and applying the
// same directory twice changes nothing the second time.
//
// One file per subject: the tenant directory (dir.go), bots and their
// release settings (apply.go, botsettings.go), channels, members,
// providers and webhooks, each with its file format, its checks, how it is
// applied and both targets' calls; knowledge bases in three files (the
// directory, applying, the targets' calls); the Target interface in
// target.go.
package apply
