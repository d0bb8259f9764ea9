package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// ChannelJobs is the channel job queue of every tenant, for the workers'
// claim loop and its sweeps: Store.ChannelJobs(). Cross-tenant.
type ChannelJobs struct{ s *Store }

// PrefixChannelJob starts channel job ids.
const PrefixChannelJob = "cjb"

// Kinds of channel job.
const (
	// ChannelJobAnswer answers a person's message that came through a
	// channel, then sends the reply (the job becomes a ChannelJobSend).
	ChannelJobAnswer = "answer"
	// ChannelJobSend sends Text into the job's conversation.
	ChannelJobSend = "send"
)

// ChannelJob is work owed to a channel's platform, kept until it is done:
// a message acknowledged to the platform and not yet answered, or a text
// not yet sent into its conversation. Workers on any number of processes
// claim jobs for a lease, as the webhook deliverer claims deliveries.
type ChannelJob struct {
	ID           string `gorm:"primaryKey"`
	TenantID     string
	ChannelID    string
	Kind         string
	DeliveryID   string
	Conversation string
	UserID       string
	// MessageID is the id an answer job stores the person's text under:
	// a job run again after a crash finds it stored and answers it.
	MessageID     string
	DialogID      string
	Text          string
	Attempts      int
	NextAttemptAt time.Time
	Claim         string
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// AddJob queues j, due at once unless it says when. Call it inside
// the transaction of the fact that owes the work, so both commit or
// neither does.
func (ch Channels) AddJob(ctx context.Context, j *ChannelJob) error {
	s := ch.s
	j.TenantID = ch.tenant
	if j.ID == "" {
		j.ID = NewID(PrefixChannelJob)
	}
	now := s.db.NowFunc()
	if j.NextAttemptAt.IsZero() {
		j.NextAttemptAt = now
	}
	j.CreatedAt, j.UpdatedAt = now, now
	return wrap("add channel job", s.q(ctx).Create(j).Error)
}

// QueueDelivery records a platform's delivery d and queues job,
// which answers it, in one commit: once the platform is acknowledged the
// message is either answered or waiting to be, whatever dies. A delivery
// recorded before (a retry) queues nothing: claimed is false and first is
// its record.
func (ch Channels) QueueDelivery(ctx context.Context, d ChannelDelivery, job *ChannelJob) (claimed bool, first *ChannelDelivery, err error) {
	s := ch.s
	d.TenantID = ch.tenant
	err = s.Tx(ctx, func(tx *Store) error {
		if claimed, first, err = tx.claimDelivery(ctx, d); err != nil || !claimed {
			return err
		}
		return tx.Tenant(ch.tenant).Channels().AddJob(ctx, job)
	})
	if err != nil {
		return false, nil, err
	}
	return claimed, first, nil
}

// QueueReply queues text to be sent into the platform conversation
// the dialog answers; a dialog that came through no channel queues
// nothing and reports false.
func (ch Channels) QueueReply(ctx context.Context, dialogID, text string) (bool, error) {
	conv, err := ch.ConversationOf(ctx, dialogID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	j := &ChannelJob{TenantID: ch.tenant, ChannelID: conv.ChannelID, Kind: ChannelJobSend, Conversation: conv.ExternalID,
		UserID: conv.UserID, DialogID: dialogID, Text: text}
	return true, ch.AddJob(ctx, j)
}

// deadClaimSQL, on PostgreSQL, is true for a job claimed by another
// instance whose liveness lock is free: that instance died, and its jobs
// are due at once rather than when their lease ends (see ownerDeadSQL).
const deadClaimSQL = ` OR (claim LIKE '` + instancePrefix + `%' AND split_part(claim, '/', 1) <> split_part(?, '/', 1)
  AND pg_try_advisory_xact_lock(hashtextextended(split_part(claim, '/', 1), 0)))`

// Claim claims up to limit due jobs for claim (the worker's
// token, its instance id first): each is due again after lease, should
// the worker hang, and counts one attempt more. On PostgreSQL concurrent
// workers skip each other's rows, and a dead instance's jobs are due at
// once; on SQLite the write lock serialises claims. Like the webhook
// deliverer it spans tenants; each job carries its tenant, by which the
// later writes are scoped. skip names jobs the caller has in flight.
func (c ChannelJobs) Claim(ctx context.Context, claim string, lease time.Duration, limit int, skip []string) ([]ChannelJob, error) {
	s := c.s
	now := s.db.NowFunc()
	var out []ChannelJob
	err := s.Tx(ctx, func(tx *Store) error {
		ids, err := tx.dueIDs(ctx, "channel_jobs", "", claim, now, limit, skip)
		if err != nil || len(ids) == 0 {
			return err
		}
		err = tx.q(ctx).Exec(`UPDATE channel_jobs SET claim = ?, next_attempt_at = ?, attempts = attempts + 1, updated_at = ? WHERE id IN ?`,
			claim, now.Add(lease), now, ids).Error
		if err != nil {
			return err
		}
		return tx.q(ctx).Where("id IN ?", ids).Order("id").Find(&out).Error
	})
	return out, wrap("claim channel jobs", err)
}

// dueIDs picks, in a claim's transaction, up to limit rows of a job
// table due by now (and, on PostgreSQL, rows a dead server had claimed),
// oldest due first, skipping the ids in skip; cond narrows the rows
// further. On PostgreSQL the rows are locked and other claimers skip
// them; on SQLite the write lock serialises claims.
func (s *Store) dueIDs(ctx context.Context, table, cond, claim string, now time.Time, limit int, skip []string) ([]string, error) {
	where, args := cond+"(next_attempt_at <= ?", []any{now}
	lock := ""
	if s.dialect == DialectPostgres {
		where += deadClaimSQL
		args = append(args, claim)
		lock = " FOR UPDATE SKIP LOCKED"
	}
	where += ")"
	if len(skip) > 0 {
		where += " AND id NOT IN ?"
		args = append(args, skip)
	}
	var ids []string
	err := s.q(ctx).Raw(`SELECT id FROM `+table+` WHERE `+where+` ORDER BY next_attempt_at LIMIT ?`+lock,
		append(args, limit)...).Scan(&ids).Error
	return ids, err
}

// ReleaseClaims makes every claimed job due now. Only a server that
// holds the SQLite data dir for itself may call it, at start: nobody else
// can be working on them.
func (c ChannelJobs) ReleaseClaims(ctx context.Context, now time.Time) (int64, error) {
	s := c.s
	res := s.w(ctx).Exec("UPDATE channel_jobs SET claim = '', next_attempt_at = ? WHERE claim <> ''", now)
	return res.RowsAffected, wrap("release channel claims", res.Error)
}

// Due counts the jobs due now and claimed by nobody.
func (c ChannelJobs) Due(ctx context.Context) (int64, error) {
	s := c.s
	var n int64
	err := s.q(ctx).Model(&ChannelJob{}).Where("next_attempt_at <= ?", s.db.NowFunc()).Count(&n).Error
	return n, wrap("due channel jobs", err)
}

// jobClaimed updates fields of j, or deletes it when fields is nil, if
// j's claim still holds: a claim that lapsed and was taken over writes
// nothing (ErrConflict).
func (s *Store) jobClaimed(ctx context.Context, what string, j *ChannelJob, fields map[string]any) error {
	q := s.q(ctx).Model(&ChannelJob{}).Where("tenant_id = ? AND id = ? AND claim = ?", j.TenantID, j.ID, j.Claim)
	var res *gorm.DB
	if fields == nil {
		res = q.Delete(&ChannelJob{})
	} else {
		res = q.Updates(fields)
	}
	if res.Error != nil {
		return wrap(what, res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap(what, ErrConflict)
	}
	return nil
}

// Finish deletes a job its worker is done with: done, or given
// up on.
func (c ChannelJobs) Finish(ctx context.Context, j *ChannelJob) error {
	s := c.s
	return s.jobClaimed(ctx, "finish channel job", j, nil)
}

// Retry gives up the claim of a job that failed for now; it is
// due again at at.
func (c ChannelJobs) Retry(ctx context.Context, j *ChannelJob, at time.Time, lastError string) error {
	s := c.s
	return s.jobClaimed(ctx, "retry channel job", j, map[string]any{"claim": "", "next_attempt_at": at, "last_error": lastError,
		"updated_at": s.db.NowFunc()})
}

// Answered turns an answered job into the sending of its reply,
// still claimed (its attempts count the sends, this one the first): a
// worker that dies now leaves the reply to send, not the message to
// answer again.
func (c ChannelJobs) Answered(ctx context.Context, j *ChannelJob, dialogID, reply string) error {
	s := c.s
	err := s.jobClaimed(ctx, "answered channel job", j, map[string]any{"kind": ChannelJobSend, "dialog_id": dialogID, "text": reply,
		"attempts": 1, "updated_at": s.db.NowFunc()})
	if err == nil {
		j.Kind, j.DialogID, j.Text, j.Attempts = ChannelJobSend, dialogID, reply, 1
	}
	return err
}
