package bulk

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/browse"
)

// Budget is one identity's share of the connection's scan budget
// (scanbudget.Tap): the count's SCAN calls draw from it, like a search.
type Budget interface {
	Take(ctx context.Context, keys int64) error
}

// ScanCount is the COUNT of the count's SCAN calls.
const ScanCount = 500

// MaxPattern bounds a glob pattern's length.
const MaxPattern = 1024

// walk is how a selection's keys are found.
type walk struct {
	match, typ string
	belongs    func(key string) bool
}

func (e *Engine) walkOf(conn *redisview.Conn, sel Selection) (walk, error) {
	protected := func(k string) bool {
		return e.o.Runner != nil && e.o.Runner.Protected(k) || len(k) >= 8 && k[:8] == "keydeck:"
	}
	switch {
	case sel.DB < 0 || sel.DB > 1<<16:
		return walk{}, invalidf("no database %d", sel.DB)
	case (sel.Family == "") == (sel.Pattern == ""):
		return walk{}, invalidf("name a family or a pattern (one of them)")
	case sel.Pattern != "":
		if len(sel.Pattern) > MaxPattern {
			return walk{}, invalidf("the pattern is longer than %d bytes", MaxPattern)
		}
		return walk{match: sel.Pattern, belongs: func(k string) bool { return !protected(k) }}, nil
	}
	cls := conn.Classifier()
	if cls == nil {
		return walk{}, invalidf("the connection has no schema pack yet, so its families are not known")
	}
	f := cls.Pack().Family(sel.Family)
	if f == nil || !f.InDB(sel.DB) {
		return walk{}, invalidf("the pack %s has no family %q in db%d", cls.Pack().Name, sel.Family, sel.DB)
	}
	w := browse.WalkOf(browse.Request{Family: f})
	return walk{match: w.Match, typ: w.Type, belongs: func(k string) bool {
		m, ok := cls.Match(sel.DB, k)
		return ok && m.Family == f && !protected(k)
	}}, nil
}

// Count starts counting the keys of spec's selection in the background
// and returns the job (Status Counting); Job reads its progress. The
// count's SCAN calls draw from budget (nil: unpaced).
func (e *Engine) Count(ctx context.Context, actor action.Actor, conn *redisview.Conn, spec Spec, budget Budget) (Job, error) {
	if err := e.admin(actor); err != nil {
		return Job{}, err
	}
	k, err := e.checkSpec(spec)
	if err != nil {
		return Job{}, err
	}
	if spec.Kind == KindUndo {
		return Job{}, invalidf("an undo job is made by Undo")
	}
	spec.Sel.Conn = conn.Name
	w, err := e.walkOf(conn, spec.Sel)
	if err != nil {
		return Job{}, err
	}
	if err := e.fingerprintKey(ctx); err != nil {
		return Job{}, err
	}
	j := e.newJob(actor, spec, k)
	j.Status = Counting
	if _, err := e.acquire(ctx, j.ID); err != nil {
		return Job{}, err
	}
	if err := e.save(ctx, j); err != nil {
		return Job{}, err
	}
	e.spawn("count:"+j.ID, func(ctx context.Context) {
		e.holding(ctx, j.ID, func(ctx context.Context) { e.count(ctx, conn, j, w, budget) })
	})
	return j, nil
}

func (e *Engine) newJob(actor action.Actor, spec Spec, k Kind) Job {
	now := e.now().UTC()
	return Job{ID: e.newID(), Spec: spec, Title: k.Title(), User: actor.User, Level: actor.Level.String(),
		Created: now, Updated: now}
}

// MaxTTL bounds an expire job's TTL.
const MaxTTL = 10 * 365 * 24 * time.Hour

func (e *Engine) checkSpec(spec Spec) (Kind, error) {
	k, err := kindOf(spec.Kind)
	if err != nil {
		return nil, err
	}
	if spec.Kind == KindExpire && (spec.TTL < time.Millisecond || spec.TTL > MaxTTL) {
		return nil, invalidf("the TTL must be between 1ms and 10 years")
	}
	if spec.Kind != KindExpire && spec.TTL != 0 {
		return nil, invalidf("a TTL is for the expire kind only")
	}
	return k, nil
}

// count walks the selection and records every key found with its
// fingerprint; it ends Counted, or Failed, or Cancelled when asked.
func (e *Engine) count(ctx context.Context, conn *redisview.Conn, j Job, w walk, budget Budget) {
	err := e.countWalk(ctx, conn, &j, w, budget)
	switch {
	case ctx.Err() != nil:
		e.release(ctx, j.ID) // this engine stops: the count is found interrupted (Run)
		return
	case errors.Is(err, errCancelled):
		j.Status = Cancelled
	case errors.Is(err, errTooMany):
		j.Status, j.Error = Failed, fmt.Sprintf("more than %d keys match: narrow the pattern (nothing was kept or changed)", e.o.MaxKeys)
	case err != nil:
		j.Status, j.Error = Failed, "the count stopped: "+conn.SafeErr(err)
	default:
		j.Status = Counted
		e.decideUndo(&j)
	}
	j.Updated = e.now().UTC()
	if j.Status != Counted {
		// A count that did not end cannot be started: its items go now.
		j.ItemBytes = 0
		if err := e.o.Audit.Del(context.WithoutCancel(ctx), e.items(j.ID)).Err(); err != nil {
			e.o.Log.Warn("bulk: items of a stopped count not deleted", "job", j.ID, "err", err)
		}
	}
	if err := e.saveAs(context.WithoutCancel(ctx), j, true); err != nil {
		e.o.Log.Warn("bulk: count not saved", "job", j.ID, "err", err)
	}
}

var (
	errCancelled = errors.New("cancelled")
	errTooMany   = errors.New("too many keys")
)

func (e *Engine) countWalk(ctx context.Context, conn *redisview.Conn, j *Job, w walk, budget Budget) error {
	c := conn.DB(j.Spec.Sel.DB)
	seen := map[[16]byte]struct{}{}
	cur := redisview.CursorStart
	for {
		if err := e.countTurn(ctx, j.ID); err != nil {
			return err
		}
		if budget != nil {
			width, err := redisview.StepWidth(ctx, c, cur)
			if err != nil {
				return err
			}
			if err := budget.Take(ctx, int64(ScanCount*width)); err != nil {
				return err
			}
		}
		keys, next, err := redisview.ScanStep(ctx, c, cur, w.match, ScanCount, w.typ)
		if err != nil {
			return err
		}
		j.Scanned += int64(len(keys))
		var mine []string
		for _, k := range keys {
			h := sha256.Sum256([]byte(k))
			id := [16]byte(h[:16])
			if _, dup := seen[id]; dup || !w.belongs(k) {
				continue
			}
			seen[id] = struct{}{}
			mine = append(mine, k)
		}
		if err := e.countPage(ctx, conn, c, j, mine); err != nil {
			return err
		}
		if j.Count > e.o.MaxKeys {
			return errTooMany
		}
		if next.Done() {
			return nil
		}
		cur = next
	}
}

// countTurn renews the count's lease and stops it when cancelled.
func (e *Engine) countTurn(ctx context.Context, id string) error {
	if ok, err := e.renew(ctx, id); err != nil || !ok {
		return errors.Join(err, errors.New("the count's lease was lost"))
	}
	stop, err := e.cancelRequested(ctx, id)
	if err != nil {
		return err
	}
	if stop {
		return errCancelled
	}
	return nil
}

// countPage reads the sizes and states of one page's keys, each read
// paid for from the connection's bulk budget by the counting user, and
// records those that exist as items.
func (e *Engine) countPage(ctx context.Context, conn *redisview.Conn, c redis.Cmdable, j *Job, keys []string) error {
	if len(keys) > 0 {
		if err := e.pay(ctx, conn.Name, j, int64(len(keys))); err != nil {
			return err
		}
		states, err := e.readStates(ctx, c, keys)
		if err != nil {
			return err
		}
		var items []any
		for i, s := range states {
			if !s.Exists() {
				continue // gone between SCAN and the read
			}
			it := encodeItem(Item{Key: keys[i], Print: e.p.print(s)})
			items = append(items, it)
			e.tally(j, conn, keys[i], s, len(it))
		}
		if len(items) > 0 {
			if err := e.o.Audit.RPush(ctx, e.items(j.ID), items...).Err(); err != nil {
				return auditErr(err)
			}
		}
	}
	j.Updated = e.now().UTC()
	return e.save(ctx, *j)
}

// pay takes n keys' reads from the connection's bulk budget for the
// counting user, in pieces that each wait about a quarter of the lease
// at most (alone on the budget), renewing the count's lease between them.
func (e *Engine) pay(ctx context.Context, conn string, j *Job, n int64) error {
	piece := max(1, int64(float64(e.o.Rate)*e.o.Lease.Seconds()/4))
	for n > 0 {
		k := min(n, piece)
		if err := e.rate(conn).Take(ctx, j.User, k); err != nil {
			return err
		}
		if n -= k; n > 0 {
			if err := e.countTurn(ctx, j.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// tally adds one item (encoded in n bytes) to the count's figures.
func (e *Engine) tally(j *Job, conn *redisview.Conn, key string, s State, n int) {
	j.Count++
	j.ItemBytes += int64(n)
	j.DumpBytes += int64(len(s.Dump))
	if s.Memory >= 0 {
		j.Memory += s.Memory
	} else {
		j.MemoryUnknown++
	}
	if conn.Sensitive(j.Spec.Sel.DB, key) {
		j.Sensitive++
	}
	inSample := len(j.Sample) < SampleSize
	if inSample {
		j.Sample = append(j.Sample, key)
	}
	if s.Large {
		j.Large++
		if j.LargeKey == "" {
			j.LargeKey = key
			if !inSample { // the reason names it: the sample shows it
				j.Sample[len(j.Sample)-1] = key
			}
		}
	}
}

// decideUndo says whether a counted job can be undone, and why not.
func (e *Engine) decideUndo(j *Job) {
	switch {
	case j.Spec.Kind == KindUndo:
		j.Undoable, j.UndoReason = false, "an undo is not undone in turn"
	case j.Large > 0:
		more := ""
		if j.Large > 1 {
			more = fmt.Sprintf(" (and %d more keys)", j.Large-1)
		}
		j.Undoable, j.UndoReason = false, fmt.Sprintf("key %s%s is larger than %d bytes, or its size could not be measured (MEMORY USAGE refused), so its value is never read nor recorded",
			quoteKey(j.LargeKey), more, e.o.MaxKeyBytes)
	case j.Sensitive > 0:
		j.Undoable, j.UndoReason = false, fmt.Sprintf("%d of the keys are of sensitive families, whose values are never recorded", j.Sensitive)
	case j.Count > e.o.UndoKeys:
		j.Undoable, j.UndoReason = false, fmt.Sprintf("it acts on more than %d keys, the most whose prior state is recorded", e.o.UndoKeys)
	case j.DumpBytes > e.o.UndoBytes:
		j.Undoable, j.UndoReason = false, fmt.Sprintf("the keys' values take %d bytes, more than the %d recorded at most", j.DumpBytes, e.o.UndoBytes)
	default:
		j.Undoable, j.UndoReason = true, ""
	}
}

// quoteKey names a key in a message: quoted (valid UTF-8 whatever its
// bytes), and shortened.
func quoteKey(k string) string {
	const most = 80
	if len(k) > most {
		return fmt.Sprintf("%q…", k[:most])
	}
	return fmt.Sprintf("%q", k)
}
