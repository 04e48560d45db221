package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The keys of one job, and the engine's indexes (see the package doc).
func (e *Engine) jobKey(id string) string        { return e.o.Prefix + "job:" + id }
func (e *Engine) jobPart(id, part string) string { return e.o.Prefix + "job:" + id + ":" + part }
func (e *Engine) jobsKey() string                { return e.o.Prefix + "jobs" }
func (e *Engine) activeKey() string              { return e.o.Prefix + "active" }
func (e *Engine) items(id string) string         { return e.jobPart(id, "items") }
func (e *Engine) priors(id string) string        { return e.jobPart(id, "priors") }
func (e *Engine) skipped(id string) string       { return e.jobPart(id, "skipped") }
func (e *Engine) inflight(id string) string      { return e.jobPart(id, "inflight") }
func (e *Engine) lease(id string) string         { return e.jobPart(id, "lease") }
func (e *Engine) jobParts(id string) []string {
	return []string{e.jobKey(id), e.items(id), e.priors(id), e.skipped(id), e.inflight(id), e.lease(id)}
}

// keep is how long a started job's records stay after it was last
// updated: long enough to undo it next month.
const keep = 400 * 24 * time.Hour

// retention is how long j's records stay: a job never started (counted,
// cancelled or failed before it ran) is a preview, kept PreviewTTL; its
// items (a key name and fingerprint each, an import's payloads) would
// otherwise sit in the audit Redis — by default the application's own
// server — for 400 days. Start saves the job with its intent, which
// gives every part the long retention.
func (e *Engine) retention(j Job) time.Duration {
	if j.Intent == "" && j.Status != Running {
		return e.o.PreviewTTL
	}
	return keep
}

func auditErr(err error) error {
	return fmt.Errorf("%w: the bulk job's state could not be read or written in the audit Redis: %v", errAudit, err)
}

// queueSave queues the write of j's state (and its place in the
// indexes) on p.
func (e *Engine) queueSave(ctx context.Context, p redis.Pipeliner, j Job) {
	b, err := json.Marshal(j)
	if err != nil {
		panic(err) // strings and numbers always marshal
	}
	p.HSet(ctx, e.jobKey(j.ID), "state", b)
	p.ZAdd(ctx, e.jobsKey(), redis.Z{Score: float64(j.Created.UnixMilli()), Member: j.ID})
	if j.Status == Counting || j.Status == Running {
		p.SAdd(ctx, e.activeKey(), j.ID)
	} else {
		p.SRem(ctx, e.activeKey(), j.ID)
	}
	ttl := e.retention(j)
	for _, k := range e.jobParts(j.ID) {
		if k != e.lease(j.ID) {
			p.Expire(ctx, k, ttl)
		}
	}
}

// save writes j's state.
func (e *Engine) save(ctx context.Context, j Job) error { return e.saveAs(ctx, j, false) }

// saveAs writes j's state and, with release, gives up its lease in the
// same transaction (only if held: saveHeld): a job seen stopped is free
// to start or resume.
func (e *Engine) saveAs(ctx context.Context, j Job, release bool) error {
	if release {
		return e.saveHeld(ctx, j, true)
	}
	_, err := e.o.Audit.TxPipelined(ctx, func(p redis.Pipeliner) error {
		e.queueSave(ctx, p, j)
		return nil
	})
	if err != nil {
		return auditErr(err)
	}
	return nil
}

// validID: a job id as newID writes it (a URL's id is checked before it
// names a key of the audit Redis).
func validID(id string) bool {
	if len(id) < 17 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == 'T' || c == '-') {
			return false
		}
	}
	return true
}

// Job reads a job's state.
func (e *Engine) Job(ctx context.Context, id string) (Job, error) {
	if !validID(id) {
		return Job{}, ErrNotFound
	}
	s, err := e.o.Audit.HGet(ctx, e.jobKey(id), "state").Result()
	if errors.Is(err, redis.Nil) {
		return Job{}, ErrNotFound
	}
	if err != nil {
		return Job{}, auditErr(err)
	}
	var j Job
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return Job{}, auditErr(err)
	}
	return j, nil
}

// Jobs lists the latest jobs, newest first (at most n).
func (e *Engine) Jobs(ctx context.Context, n int64) ([]Job, error) {
	ids, err := e.o.Audit.ZRevRange(ctx, e.jobsKey(), 0, n-1).Result()
	if err != nil {
		return nil, auditErr(err)
	}
	out := make([]Job, 0, len(ids))
	for _, id := range ids {
		j, err := e.Job(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // expired
		}
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Skips reads the skipped items of a job, from the first (at most n).
func (e *Engine) Skips(ctx context.Context, id string, n int64) ([]Skip, int64, error) {
	p := e.o.Audit.Pipeline()
	r := p.LRange(ctx, e.skipped(id), 0, n-1)
	l := p.LLen(ctx, e.skipped(id))
	if _, err := p.Exec(ctx); err != nil {
		return nil, 0, auditErr(err)
	}
	var out []Skip
	for _, s := range r.Val() {
		f, err := readFields([]byte(s), 2)
		if err != nil {
			continue
		}
		out = append(out, Skip{Key: string(f[0]), Reason: string(f[1])})
	}
	return out, l.Val(), nil
}

func encodeSkip(s Skip) string {
	return string(appendField(appendField(nil, []byte(s.Key)), []byte(s.Reason)))
}

// cancelRequested reports whether an admin asked the job to stop.
func (e *Engine) cancelRequested(ctx context.Context, id string) (bool, error) {
	n, err := e.o.Audit.HExists(ctx, e.jobKey(id), "cancel").Result()
	if err != nil {
		return false, auditErr(err)
	}
	return n, nil
}

// loadItems reads items [from, from+n) of a job, and the key of their
// fingerprints (for the batch to compare them).
func (e *Engine) loadItems(ctx context.Context, id string, from, n int64) ([]Item, error) {
	if err := e.fingerprintKey(ctx); err != nil {
		return nil, err
	}
	raw, err := e.o.Audit.LRange(ctx, e.items(id), from, from+n-1).Result()
	if err != nil {
		return nil, auditErr(err)
	}
	out := make([]Item, len(raw))
	for i, s := range raw {
		it, err := decodeItem(s)
		if err != nil {
			return nil, auditErr(err)
		}
		out[i] = it
	}
	return out, nil
}
