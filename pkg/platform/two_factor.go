package platform

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// TwoFactor is two-factor sign-in for password accounts: an authenticator
// app's time-based codes (RFC 6238) and one-time recovery codes: reach it
// with Service.TwoFactor().
type TwoFactor struct{ svc *Service }

// TwoFactor returns two-factor sign-in for password accounts.
func (s *Service) TwoFactor() TwoFactor { return TwoFactor{s} }

// Audit actions of two-factor sign-in, written to every tenant the person
// is a member of: a second factor guards all of them.
const (
	AuditTwoFactorEnabled      = "two_factor.enabled"
	AuditTwoFactorDisabled     = "two_factor.disabled"
	AuditTwoFactorRecoveryUsed = "two_factor.recovery_code_used"
)

// The shape of codes: RFC 6238's defaults, which every authenticator app
// reads from an otpauth:// URI.
const (
	totpStep   = 30 * time.Second
	totpDigits = 6
	// totpSkew accepts the code of the step before and after, for clocks
	// a little apart and people a little slow.
	totpSkew = 1
	// RecoveryCodeCount is how many recovery codes confirming enrolment
	// hands out.
	RecoveryCodeCount = 10
	// ChallengeTTL is how long a password sign-in waits for its second
	// step.
	ChallengeTTL = 5 * time.Minute
	// ChallengePrefix marks a sign-in challenge token.
	ChallengePrefix = "tfc_"
	totpIssuer      = "Parley"
)

// totpSealName is the name a user's secret is sealed under, with no
// tenant: a second factor is the person's.
func totpSealName(userID string) string { return "totp:" + userID }

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// totpCode is the code of a time step (RFC 4226's HOTP with SHA-1 over
// the step number, dynamically truncated to totpDigits digits).
func totpCode(secret []byte, step int64) string {
	m := hmac.New(sha1.New, secret)
	_ = binary.Write(m, binary.BigEndian, step)
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%0*d", totpDigits, v%1_000_000)
}

// matchCode returns the time step whose code code is, within totpSkew
// steps of now.
func matchCode(secret []byte, code string, now time.Time) (int64, bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != totpDigits {
		return 0, false
	}
	cur := now.Unix() / int64(totpStep/time.Second)
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		if hmac.Equal([]byte(totpCode(secret, cur+d)), []byte(code)) {
			return cur + d, true
		}
	}
	return 0, false
}

// TOTPCode is the authenticator code of the base32 secret at t, for tests
// and tools that play the authenticator app.
func TOTPCode(secret string, t time.Time) (string, error) {
	key, err := b32.DecodeString(strings.ToUpper(strings.ReplaceAll(secret, " ", "")))
	if err != nil {
		return "", err
	}
	return totpCode(key, t.Unix()/int64(totpStep/time.Second)), nil
}

// TwoFactorStatus is whether a person has two-factor on.
type TwoFactorStatus struct {
	Enabled           bool
	EnabledAt         *time.Time
	RecoveryCodesLeft int64
}

// TOTPEnrolment is a secret to put into an authenticator app: typed in
// (Secret, base32) or opened as a link (URI, otpauth://).
type TOTPEnrolment struct {
	Secret string
	URI    string
}

// SecondStep is what a password sign-in still needs: a code (or a
// recovery code) for Challenge, or, when a tenant requires two-factor of
// someone without it, enrolment first (Enrol).
type SecondStep struct {
	Challenge string
	Enrol     bool
	ExpiresAt time.Time
}

// Confirmed is the answer to a confirmed enrolment: the recovery codes,
// shown this once, and, when it finished a sign-in, its session.
type Confirmed struct {
	RecoveryCodes []string
	Session       *Session
}

// Status says whether the signed-in person has two-factor on; an API
// key or the operator has none.
func (tf TwoFactor) Status(ctx context.Context, p *Principal) (TwoFactorStatus, error) {
	s := tf.svc
	if p == nil {
		return TwoFactorStatus{}, unauthorized("authentication required")
	}
	if p.Kind != KindSession {
		return TwoFactorStatus{}, nil
	}
	t, err := s.store.TwoFactor().TOTP(ctx, p.UserID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.EnabledAt == nil) {
		return TwoFactorStatus{}, nil
	}
	if err != nil {
		return TwoFactorStatus{}, s.internal(ctx, "two-factor status", err)
	}
	n, err := s.store.TwoFactor().RecoveryCodesLeft(ctx, p.UserID)
	if err != nil {
		return TwoFactorStatus{}, s.internal(ctx, "two-factor status", err)
	}
	return TwoFactorStatus{Enabled: true, EnabledAt: t.EnabledAt, RecoveryCodesLeft: n}, nil
}

// enroller is the person enrolling: the signed-in one, or, with a
// challenge, the one whose sign-in waits for enrolment.
func (tf TwoFactor) enroller(ctx context.Context, p *Principal, challenge string) (*store.User, *store.SignInChallenge, error) {
	s := tf.svc
	if challenge != "" {
		c, err := tf.challenge(ctx, challenge)
		if err != nil {
			return nil, nil, err
		}
		if c.Purpose != store.ChallengeEnrol {
			return nil, nil, Errorf(CodeConflict, "two-factor is on already; sign in with a code")
		}
		u, err := s.store.Users().Get(ctx, c.UserID)
		if err != nil {
			return nil, nil, s.internal(ctx, "enrol: user", err)
		}
		return u, &c, nil
	}
	if p == nil || p.Kind != KindSession {
		return nil, nil, Errorf(CodeForbidden, "two-factor belongs to a person: sign in to the admin UI")
	}
	u, err := s.store.Users().Get(ctx, p.UserID)
	if err != nil {
		return nil, nil, s.internal(ctx, "enrol: user", err)
	}
	return u, nil, nil
}

// StartEnrolment makes a new secret for the person (signed in, or with an
// enrolment challenge), sealed at rest; it is on once Confirm gets a code
// of it. Starting again replaces a secret not yet confirmed.
func (tf TwoFactor) StartEnrolment(ctx context.Context, p *Principal, challenge string) (TOTPEnrolment, error) {
	s := tf.svc
	u, _, err := tf.enroller(ctx, p, challenge)
	if err != nil {
		return TOTPEnrolment{}, err
	}
	key := make([]byte, 20) // RFC 4226: a 160-bit secret for HMAC-SHA-1
	_, _ = rand.Read(key)
	row := store.UserTOTP{UserID: u.ID}
	if row.Nonce, row.Ciphertext, err = s.opts.Sealer.Seal("", totpSealName(u.ID), key); err != nil {
		return TOTPEnrolment{}, s.internal(ctx, "seal totp secret", err)
	}
	err = s.store.TwoFactor().StartEnrolment(ctx, &row)
	if errors.Is(err, store.ErrConflict) {
		return TOTPEnrolment{}, Errorf(CodeConflict, "two-factor is on already; turn it off first to enrol another authenticator")
	}
	if err != nil {
		return TOTPEnrolment{}, s.internal(ctx, "start totp enrolment", err)
	}
	secret := b32.EncodeToString(key)
	label := url.PathEscape(totpIssuer + ":" + u.Email)
	q := url.Values{"secret": {secret}, "issuer": {totpIssuer}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return TOTPEnrolment{Secret: secret, URI: "otpauth://totp/" + label + "?" + q.Encode()}, nil
}

// Confirm turns two-factor on with a current code of the secret being
// enrolled and hands out RecoveryCodeCount recovery codes, kept hashed.
// With an enrolment challenge it also finishes that sign-in.
func (tf TwoFactor) Confirm(ctx context.Context, p *Principal, challenge, code, ip string) (Confirmed, error) {
	s := tf.svc
	u, c, err := tf.enroller(ctx, p, challenge)
	if err != nil {
		return Confirmed{}, err
	}
	row, err := s.store.TwoFactor().TOTP(ctx, u.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.EnabledAt != nil) {
		return Confirmed{}, Errorf(CodeConflict, "no enrolment under way; start one first (POST /v1/auth/totp)")
	}
	if err != nil {
		return Confirmed{}, s.internal(ctx, "confirm totp", err)
	}
	key, err := tf.open(ctx, &row)
	if err != nil {
		return Confirmed{}, err
	}
	step, ok := matchCode(key, code, s.now())
	if !ok {
		return Confirmed{}, invalidAt("/code", "is not the authenticator's current code; check the device's clock and type the 6 digits shown now")
	}
	codes, hashes := newRecoveryCodes()
	actor := tf.actor(p, u, ip)
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.TwoFactor().Enable(ctx, u.ID, step, hashes); err != nil {
			return err
		}
		return tf.auditEverywhere(ctx, tx, actor, u, auditRecord{action: AuditTwoFactorEnabled, target: u.Email})
	})
	if errors.Is(err, store.ErrNotFound) {
		return Confirmed{}, Errorf(CodeConflict, "two-factor is on already")
	}
	if err != nil {
		return Confirmed{}, s.internal(ctx, "confirm totp", err)
	}
	out := Confirmed{RecoveryCodes: codes}
	if c != nil {
		sess, err := tf.finish(ctx, c, u)
		if err != nil {
			return Confirmed{}, err
		}
		out.Session = &sess
	} else if p.SessionVia == store.SessionPassword {
		// This session has just shown the second factor.
		if err := s.store.Sessions().SetVia(ctx, u.ID, p.SessionID, store.SessionTwoFactor); err != nil {
			s.log.WarnContext(ctx, "platform: mark session two-factor", "err", err)
		}
	}
	return out, nil
}

// Disable turns two-factor off for the signed-in person, who proves it is
// them with their password or a current code. A tenant that requires
// two-factor keeps it on.
func (tf TwoFactor) Disable(ctx context.Context, p *Principal, password, code string) error {
	s := tf.svc
	u, _, err := tf.enroller(ctx, p, "")
	if err != nil {
		return err
	}
	row, err := s.store.TwoFactor().TOTP(ctx, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return NotFound("two-factor (it is off)")
	}
	if err != nil {
		return s.internal(ctx, "disable totp", err)
	}
	if row.EnabledAt != nil {
		if err := tf.proveDisable(ctx, u, &row, password, code); err != nil {
			return err
		}
		if slugs, err := tf.requiringTenants(ctx, u.ID); err != nil {
			return err
		} else if len(slugs) > 0 {
			return Errorf(CodeConflict, "%s requires two-factor sign-in; it stays on while you are a member", strings.Join(slugs, ", "))
		}
	}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.TwoFactor().Disable(ctx, u.ID); err != nil {
			return err
		}
		if row.EnabledAt == nil { // an enrolment never confirmed: nothing was on
			return nil
		}
		return tf.auditEverywhere(ctx, tx, p, u, auditRecord{action: AuditTwoFactorDisabled, target: u.Email})
	})
	return s.storeErr(ctx, "disable totp", "two-factor", "", err)
}

// Reset turns two-factor off for someone who lost both the authenticator
// and the recovery codes: only the operator may (parley user
// reset-two-factor), and every tenant of the person logs it.
func (tf TwoFactor) Reset(ctx context.Context, p *Principal, email string) error {
	s := tf.svc
	if err := requirePlatform(p); err != nil {
		return err
	}
	u, err := s.store.Users().ByEmail(ctx, email)
	if err != nil {
		return s.storeErr(ctx, "reset two-factor", "user", "", err)
	}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.TwoFactor().Disable(ctx, u.ID); err != nil {
			return err
		}
		return tf.auditEverywhere(ctx, tx, p, u, auditRecord{action: AuditTwoFactorDisabled, target: u.Email,
			detail: map[string]any{"reset": true}})
	})
	return s.storeErr(ctx, "reset two-factor", "two-factor of "+u.Email, "", err)
}

// proveDisable checks the password or code that turning two-factor off
// needs.
func (tf TwoFactor) proveDisable(ctx context.Context, u *store.User, row *store.UserTOTP, password, code string) error {
	s := tf.svc
	switch {
	case code != "":
		// A wrong code here is a mistyped field, not a lost session.
		if err := tf.useCode(ctx, u.ID, row, code); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Code == CodeUnauthorized {
				return invalidAt("/code", e.Message)
			}
			return err
		}
		return nil
	case password != "" && u.PasswordHash != "":
		if err := s.opts.Passwords.Verify(u.PasswordHash, password); err != nil {
			if errors.Is(err, auth.ErrWrongPassword) {
				return invalidAt("/password", "is not your password")
			}
			return s.internal(ctx, "disable totp: verify", err)
		}
		return nil
	default:
		return invalidAt("/password", "send your password, or a current code as code, to turn two-factor off")
	}
}

// afterPassword continues a password sign-in: someone with two-factor on
// is asked for a code; someone without it whose tenant requires it is
// asked to enrol; anyone else gets the session.
func (tf TwoFactor) afterPassword(ctx context.Context, u *store.User, via string) (SignIn, error) {
	s := tf.svc
	row, err := s.store.TwoFactor().TOTP(ctx, u.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return SignIn{}, s.internal(ctx, "login: two-factor", err)
	}
	next := via
	if via == store.SessionPassword {
		next = store.SessionTwoFactor
	}
	if err == nil && row.EnabledAt != nil {
		return tf.newChallenge(ctx, u, store.ChallengeCode, next)
	}
	if via == store.SessionPassword { // break-glass is the operator's word; it is not asked to enrol
		slugs, err := tf.requiringTenants(ctx, u.ID)
		if err != nil {
			return SignIn{}, err
		}
		if len(slugs) > 0 {
			return tf.newChallenge(ctx, u, store.ChallengeEnrol, next)
		}
	}
	sess, err := s.Auth().startSessionVia(ctx, u, via, "")
	return SignIn{Session: sess}, err
}

func (tf TwoFactor) newChallenge(ctx context.Context, u *store.User, purpose, via string) (SignIn, error) {
	s := tf.svc
	token := ChallengePrefix + randomString()
	c := store.SignInChallenge{TokenHash: auth.HashToken(token), UserID: u.ID, Purpose: purpose, Via: via,
		ExpiresAt: s.now().Add(ChallengeTTL)}
	if err := s.store.TwoFactor().CreateChallenge(ctx, &c); err != nil {
		return SignIn{}, s.internal(ctx, "login: challenge", err)
	}
	return SignIn{SecondStep: &SecondStep{Challenge: token, Enrol: purpose == store.ChallengeEnrol, ExpiresAt: c.ExpiresAt}}, nil
}

func (tf TwoFactor) challenge(ctx context.Context, token string) (store.SignInChallenge, error) {
	s := tf.svc
	c, err := s.store.TwoFactor().Challenge(ctx, auth.HashToken(token), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return c, unauthorized("this sign-in has expired or was finished already; sign in with your password again")
	}
	if err != nil {
		return c, s.internal(ctx, "sign-in challenge", err)
	}
	return c, nil
}

// ChallengeEmail is the email of the person a sign-in challenge is for,
// so the API limits their codes like their passwords; "" when there is no
// such challenge.
func (tf TwoFactor) ChallengeEmail(ctx context.Context, token string) string {
	s := tf.svc
	c, err := tf.challenge(ctx, token)
	if err != nil {
		return ""
	}
	u, err := s.store.Users().Get(ctx, c.UserID)
	if err != nil {
		return ""
	}
	return u.Email
}

// Verify finishes a password sign-in with a code from the authenticator
// or, instead, one of the recovery codes. A code is accepted once: a code
// of a time step at or before the last accepted one is refused.
func (tf TwoFactor) Verify(ctx context.Context, challenge, code, recoveryCode, ip string) (Session, error) {
	s := tf.svc
	c, err := tf.challenge(ctx, challenge)
	if err != nil {
		return Session{}, err
	}
	if c.Purpose != store.ChallengeCode {
		return Session{}, Errorf(CodeConflict, "set two-factor up first: your organisation requires it (POST /v1/auth/totp with this challenge)")
	}
	u, err := s.store.Users().Get(ctx, c.UserID)
	if err != nil {
		return Session{}, s.internal(ctx, "verify: user", err)
	}
	row, err := s.store.TwoFactor().TOTP(ctx, u.ID)
	if err != nil || row.EnabledAt == nil {
		return Session{}, unauthorized("two-factor was turned off meanwhile; sign in with your password again")
	}
	switch {
	case recoveryCode != "":
		if err := tf.useRecoveryCode(ctx, u, recoveryCode, ip); err != nil {
			return Session{}, err
		}
	case code != "":
		if err := tf.useCode(ctx, u.ID, &row, code); err != nil {
			return Session{}, err
		}
	default:
		return Session{}, invalidAt("/code", "is required: the 6 digits your authenticator shows, or send recovery_code")
	}
	return tf.finish(ctx, &c, u)
}

// useCode accepts a current code once.
func (tf TwoFactor) useCode(ctx context.Context, userID string, row *store.UserTOTP, code string) error {
	s := tf.svc
	key, err := tf.open(ctx, row)
	if err != nil {
		return err
	}
	step, ok := matchCode(key, code, s.now())
	if !ok {
		return Errorf(CodeUnauthorized, "wrong code; type the 6 digits your authenticator shows now")
	}
	fresh, err := s.store.TwoFactor().AcceptStep(ctx, userID, step)
	if err != nil {
		return s.internal(ctx, "accept code", err)
	}
	if !fresh {
		return Errorf(CodeUnauthorized, "this code was used already; wait for your authenticator's next code")
	}
	return nil
}

func (tf TwoFactor) useRecoveryCode(ctx context.Context, u *store.User, code, ip string) error {
	s := tf.svc
	var used bool
	err := s.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if used, err = tx.TwoFactor().UseRecoveryCode(ctx, u.ID, auth.HashToken(normalRecoveryCode(code)), s.now()); err != nil || !used {
			return err
		}
		left, err := tx.TwoFactor().RecoveryCodesLeft(ctx, u.ID)
		if err != nil {
			return err
		}
		return tf.auditEverywhere(ctx, tx, tf.actor(nil, u, ip), u,
			auditRecord{action: AuditTwoFactorRecoveryUsed, target: u.Email, detail: map[string]any{"recovery_codes_left": left}})
	})
	if err != nil {
		return s.internal(ctx, "use recovery code", err)
	}
	if !used {
		return Errorf(CodeUnauthorized, "wrong or already used recovery code; each one works once")
	}
	return nil
}

// finish takes the challenge (once, even for two requests racing) and
// starts the session.
func (tf TwoFactor) finish(ctx context.Context, c *store.SignInChallenge, u *store.User) (Session, error) {
	s := tf.svc
	err := s.store.TwoFactor().TakeChallenge(ctx, c.TokenHash)
	if errors.Is(err, store.ErrNotFound) {
		return Session{}, unauthorized("this sign-in was finished already; sign in with your password again")
	}
	if err != nil {
		return Session{}, s.internal(ctx, "take challenge", err)
	}
	return s.Auth().startSessionVia(ctx, u, c.Via, "")
}

func (tf TwoFactor) open(ctx context.Context, row *store.UserTOTP) ([]byte, error) {
	s := tf.svc
	key, err := s.opts.Sealer.Open("", totpSealName(row.UserID), row.Nonce, row.Ciphertext)
	if err != nil {
		return nil, s.internal(ctx, "open totp secret", errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?")))
	}
	return key, nil
}

// requiringTenants are the slugs of the person's tenants that require
// two-factor.
func (tf TwoFactor) requiringTenants(ctx context.Context, userID string) ([]string, error) {
	s := tf.svc
	ids, err := tf.activeTenants(ctx, userID)
	if err != nil {
		return nil, err
	}
	requiring, err := s.store.Users().RequiringTwoFactor(ctx, ids)
	if err != nil {
		return nil, s.internal(ctx, "tenants requiring two-factor", err)
	}
	var slugs []string
	for _, id := range requiring {
		t, err := s.store.Tenants().Get(ctx, id)
		if err != nil {
			return nil, s.internal(ctx, "tenants requiring two-factor", err)
		}
		slugs = append(slugs, t.Slug)
	}
	return slugs, nil
}

func (tf TwoFactor) activeTenants(ctx context.Context, userID string) ([]string, error) {
	s := tf.svc
	ms, err := s.store.Users().Memberships(ctx, userID)
	if err != nil {
		return nil, s.internal(ctx, "memberships", err)
	}
	var ids []string
	for _, m := range ms {
		if !m.Pending {
			ids = append(ids, m.TenantID)
		}
	}
	return ids, nil
}

// auditEverywhere writes rec to the log of every tenant the person is a
// member of, in tx.
func (tf TwoFactor) auditEverywhere(ctx context.Context, tx *store.Store, p *Principal, u *store.User, rec auditRecord) error {
	s := tf.svc
	ms, err := tx.Users().Memberships(ctx, u.ID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Pending {
			continue
		}
		if err := s.AuditLog().writeAudit(ctx, tx, p, m.TenantID, rec); err != nil {
			return err
		}
	}
	return nil
}

// actor is who the audit log names: the signed-in caller, or the person
// finishing a sign-in.
func (tf TwoFactor) actor(p *Principal, u *store.User, ip string) *Principal {
	if p != nil {
		return p
	}
	return &Principal{Kind: KindSession, UserID: u.ID, Email: u.Email, IP: ip}
}

// newRecoveryCodes makes RecoveryCodeCount codes of 50 random bits each,
// shown as xxxxx-xxxxx, and their hashes.
func newRecoveryCodes() (codes, hashes []string) {
	for range RecoveryCodeCount {
		b := make([]byte, 7)
		_, _ = rand.Read(b)
		s := strings.ToLower(b32.EncodeToString(b))[:10]
		codes = append(codes, s[:5]+"-"+s[5:])
		hashes = append(hashes, auth.HashToken(s))
	}
	return codes, hashes
}

// normalRecoveryCode lets people type a recovery code with or without its
// dash, in any case.
func normalRecoveryCode(code string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(code, func(r rune) bool { return r == '-' || r == ' ' }), ""))
}

// invalidAt is an invalid Error about one field.
func invalidAt(pointer, msg string) *Error { return Invalid(Detail{Pointer: pointer, Message: msg}) }
