package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/bottest"
	"github.com/parleyhq/parley/pkg/store"
)

// Tests is a bot's conversation tests: reach it with Service.Tests().
type Tests struct{ svc *Service }

// Tests returns a bot's conversation tests.
func (s *Service) Tests() Tests { return Tests{s} }

// TestRun is the outcome of a version's conversation tests.
type TestRun struct {
	Version int
	Passed  bool
	Results []bottest.Result
}

// checkTests validates a test file stored with a version; problems point
// into the request under /tests.
func checkTests(tests []byte) error {
	if len(bytes.TrimSpace(tests)) == 0 {
		return nil
	}
	_, err := bottest.Parse(tests)
	var ps botconfig.Problems
	if errors.As(err, &ps) {
		e := Invalid()
		e.Message = "the tests are invalid"
		for _, p := range ps {
			e.Details = append(e.Details, Detail{Pointer: "/tests" + p.Pointer, Message: p.Message})
		}
		return e
	}
	return err
}

// Run runs version n's stored conversation tests against it with the
// scripted model. Tools answer with the tests' fixtures, so nothing leaves
// the server. Any member who can read versions may run them.
func (t Tests) Run(ctx context.Context, p *Principal, tenant, bot string, n int) (TestRun, error) {
	s := t.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActRead)
	if err != nil {
		return TestRun{}, err
	}
	return s.Tests().runTests(ctx, b, n)
}

func (t Tests) runTests(ctx context.Context, b *store.Bot, n int) (TestRun, error) {
	s := t.svc
	v, err := s.store.Tenant(b.TenantID).Versions().Get(ctx, b.ID, n)
	if err != nil {
		return TestRun{}, s.storeErr(ctx, "run tests", "version", "", err)
	}
	if v.Tests == "" {
		return TestRun{}, Invalid(Detail{Pointer: "/version", Message: fmt.Sprintf("version %d has no tests; save the version with tests (docs/testing.md)", n)})
	}
	suite, err := bottest.Parse([]byte(v.Tests))
	if err != nil {
		return TestRun{}, s.internal(ctx, "run tests: stored tests", err)
	}
	compiled, err := s.Configs().CompileStored([]byte(v.Config))
	if err != nil {
		return TestRun{}, s.internal(ctx, "run tests: compile stored", err)
	}
	results := bottest.Run(ctx, compiled, suite, bottest.Options{Knowledge: s.Knowledge().testSearch(b.TenantID, b.ID, compiled)})
	return TestRun{Version: n, Passed: len(bottest.Failed(results)) == 0, Results: results}, nil
}

// publishGate refuses to publish version n of a bot that requires passing
// tests unless the version has tests and they all pass. The refusal lists
// each failed test as a detail.
func (t Tests) publishGate(ctx context.Context, b *store.Bot, n int) error {
	s := t.svc
	run, err := s.Tests().runTests(ctx, b, n)
	if err != nil {
		if ErrorCode(err) == CodeInvalid {
			return Invalid(Detail{Pointer: "/version", Message: fmt.Sprintf("this bot requires passing tests to publish, and version %d has no tests", n)})
		}
		return err
	}
	if run.Passed {
		return nil
	}
	e := Invalid()
	e.Message = fmt.Sprintf("version %d fails its tests; this bot requires passing tests to publish", n)
	e.Details = nil
	for i, r := range run.Results {
		for _, f := range r.Failures {
			e.Details = append(e.Details, Detail{Pointer: fmt.Sprintf("/tests/%d", i), Message: r.Name + ": " + f})
		}
	}
	return e
}

// Delete removes a bot with its versions and dialogs; it takes the right
// to publish, since it takes a live bot away. A bot that another bot's
// live config calls as an agent is a conflict naming the callers: their
// calls would fail from then on.
func (bo Bots) Delete(ctx context.Context, p *Principal, tenant, bot string) error {
	s := bo.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActPublish)
	if err != nil {
		return err
	}
	var inUse *Error
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		// In the transaction, so a caller published meanwhile is seen.
		callers, err := agentCallers(ctx, tx, b)
		if err != nil {
			return auditRecord{}, err
		}
		if len(callers) > 0 {
			inUse = Errorf(CodeConflict, "bot %s is used as an agent by: %s", b.Slug, strings.Join(callers, ", "))
			return auditRecord{}, inUse
		}
		return auditRecord{action: AuditBotDeleted, target: b.Slug}, tx.Tenant(b.TenantID).Bots().Delete(ctx, b.ID)
	})
	if inUse != nil {
		return inUse
	}
	return s.storeErr(ctx, "delete bot", "bot", "", err)
}

// SetRequirePassing turns a bot's publish gate on or off; it takes the
// right to publish.
func (t Tests) SetRequirePassing(ctx context.Context, p *Principal, tenant, bot string, on bool) (Bot, error) {
	s := t.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActPublish)
	if err != nil {
		return Bot{}, err
	}
	updated, err := s.store.Tenant(b.TenantID).Bots().SetRequirePassingTests(ctx, b.ID, on)
	if err != nil {
		return Bot{}, s.storeErr(ctx, "set require passing tests", "bot", "", err)
	}
	return *updated, nil
}
