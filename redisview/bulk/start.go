package bulk

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// NeedsTypedCount reports whether Start asks for the count typed back:
// a job that cannot be undone (an undo job excepted: it restores).
func (j Job) NeedsTypedCount() bool { return !j.Undoable && j.Spec.Kind != KindUndo }

// Start runs a counted job, as actor confirmed it: typed is the count
// the operator typed, required when the job cannot be undone. The intent
// is recorded in the audit stream before any key is touched. The move
// from Counted is a compare-and-set under the job's lease: of two Starts
// (a double click), or a Start and a Cancel, one wins and the other is
// refused (ErrState).
func (e *Engine) Start(ctx context.Context, actor action.Actor, id string, typed int64) (Job, error) {
	if err := e.admin(actor); err != nil {
		return Job{}, err
	}
	j, err := e.Job(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if err := startable(j, typed); err != nil {
		return Job{}, err
	}
	afterRead("start")
	ok, err := e.acquire(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if !ok {
		return Job{}, statef("the job is being started elsewhere")
	}
	j, err = e.transition(ctx, id, func(j *Job) error {
		if err := startable(*j, typed); err != nil {
			return err
		}
		j.StartedBy, j.Status, j.Updated, j.Owner = actor.User, Running, e.now().UTC(), e.o.Owner
		return nil
	}, nil)
	if err != nil {
		e.release(ctx, id)
		return Job{}, err
	}
	rec := e.record(j, actor, action.PhaseIntent)
	if j.Spec.Kind == KindUndo {
		// The original is claimed now, not when the undo was previewed: an
		// undo preview cancelled or left does not block its undo.
		if err := e.claimUndo(ctx, j.Spec.Undoes, j.ID); err != nil {
			j.StartedBy, j.Status, j.Owner = "", Counted, "" // nothing ran: back to waiting
			_ = e.saveHeld(ctx, j, true)
			return Job{}, err
		}
		if orig, err := e.Job(ctx, j.Spec.Undoes); err == nil {
			rec.Undoes = orig.Outcome
		}
	}
	if j.Intent, err = e.o.Runner.Audit().Append(ctx, rec); err != nil {
		e.unclaimUndo(ctx, j)
		j.StartedBy, j.Status, j.Owner = "", Counted, "" // nothing ran: back to waiting
		_ = e.saveHeld(ctx, j, true)
		return Job{}, err
	}
	if err := e.saveHeld(ctx, j, false); err != nil {
		e.unclaimUndo(ctx, j)
		e.release(ctx, id)
		return Job{}, err
	}
	e.spawn(id, func(ctx context.Context) { e.run(ctx, id) })
	return j, nil
}

func startable(j Job, typed int64) error {
	if j.Status != Counted {
		return statef("the job is %s, not waiting for confirmation", j.Status)
	}
	if j.NeedsTypedCount() && typed != j.Count {
		return invalidf("this bulk action cannot be undone: type the number of keys, %d, to confirm it", j.Count)
	}
	return nil
}

// afterRead is a test's hook between a transition's first read of a job
// and its compare-and-set (nil outside tests).
var afterRead = func(op string) {}

// record is a job's audit record (intent, or outcome without its result).
func (e *Engine) record(j Job, actor action.Actor, phase string) action.Record {
	args := map[string]string{"job": j.ID, "count": strconv.FormatInt(j.Count, 10)}
	add := func(k, v string) {
		if v != "" {
			args[k] = v
		}
	}
	add("family", j.Spec.Sel.Family)
	add("pattern", j.Spec.Sel.Pattern)
	add("label", j.Spec.Sel.Label)
	add("undoes_job", j.Spec.Undoes)
	if j.Spec.TTL > 0 {
		args["ttl_ms"] = strconv.FormatInt(j.Spec.TTL.Milliseconds(), 10)
	}
	if !j.Undoable {
		args["undoable"] = "no"
	}
	return action.Record{Time: e.now(), Phase: phase, User: actor.User, Level: actor.Level.String(),
		Token: actor.Token, TokenOwner: actor.TokenOwner, Action: AuditAction(j.Spec.Kind),
		Conn: j.Spec.Sel.Conn, DB: j.Spec.Sel.DB, Args: args, Summary: summary(j)}
}

// AuditAction is the audit record's action name of a job kind.
func AuditAction(kind string) string { return "bulk-" + kind }

// JobOf is the bulk job an audit record is of ("" for any other record).
func JobOf(r action.Record) string {
	if len(r.Action) > 5 && r.Action[:5] == "bulk-" {
		return r.Args["job"]
	}
	return ""
}

func summary(j Job) string {
	what := "keys"
	switch {
	case j.Spec.Sel.Family != "":
		what = "keys of family " + j.Spec.Sel.Family
	case j.Spec.Sel.Pattern != "":
		what = fmt.Sprintf("keys matching %q", j.Spec.Sel.Pattern)
	case j.Spec.Undoes != "":
		what = "keys of bulk job " + j.Spec.Undoes
	case j.Spec.Sel.Label != "":
		what = "keys of " + j.Spec.Sel.Label
	}
	s := fmt.Sprintf("%s %d %s in db%d", j.Title, j.Count, what, j.Spec.Sel.DB)
	if j.Spec.TTL > 0 {
		s += fmt.Sprintf(" (TTL %s)", j.Spec.TTL)
	}
	if j.Status == Done || j.Status == Cancelled || j.Status == Failed {
		s += fmt.Sprintf(": %s, %d acted on, %d skipped (%d changed since the count, %d gone, %d other), %d not reached",
			j.Status, j.Acted, j.Skipped(), j.Changed, j.Gone, j.Other, j.Count-j.Next)
	}
	return s
}

// Cancel asks a counting or running job to stop; it stops after its
// current batch (Job then says Cancelled). A counted job is cancelled at
// once, as a compare-and-set under its lease; one started meanwhile is
// asked to stop instead. The audit stream records who cancelled.
func (e *Engine) Cancel(ctx context.Context, actor action.Actor, id string) error {
	if err := e.admin(actor); err != nil {
		return err
	}
	j, err := e.Job(ctx, id)
	if err != nil {
		return err
	}
	afterRead("cancel")
	switch j.Status {
	case Counting, Running:
		return e.requestCancel(ctx, actor, id)
	case Counted:
	default:
		return statef("the job is %s", j.Status)
	}
	ok, err := e.acquire(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return e.requestCancel(ctx, actor, id) // started meanwhile
	}
	j, err = e.transition(ctx, id, func(j *Job) error {
		if j.Status != Counted {
			return statef("the job is %s", j.Status)
		}
		j.Status, j.Updated = Cancelled, e.now().UTC()
		return nil
	}, func(p redis.Pipeliner) { p.Del(ctx, e.lease(id)) })
	if err != nil {
		e.release(ctx, id)
		return err
	}
	e.control(ctx, actor, j, "cancel")
	return nil
}

// requestCancel marks a counting or running job to stop, if it still is
// one (compare-and-set on the job key: its batches save it, so a few
// tries).
func (e *Engine) requestCancel(ctx context.Context, actor action.Actor, id string) error {
	for range fencedAttempts {
		var j Job
		err := e.o.Audit.Watch(ctx, func(tx *redis.Tx) error {
			var err error
			if j, err = e.Job(ctx, id); err != nil {
				return err
			}
			if j.Status != Counting && j.Status != Running {
				return statef("the job is %s; look at it again", j.Status)
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, e.jobKey(id), "cancel", actor.User)
				return nil
			})
			return err
		}, e.jobKey(id))
		switch {
		case errors.Is(err, redis.TxFailedErr):
			continue
		case err == nil:
			e.control(ctx, actor, j, "cancel")
			return nil
		case errors.Is(err, ErrState), errors.Is(err, errAudit), errors.Is(err, action.ErrNotFound):
			return err
		}
		return auditErr(err)
	}
	return statef("the job kept changing under this request; try again")
}

// control records an admin's cancel or resume of a job in the audit
// stream: an intent record by that admin (args control: the verb), whose
// Ref is the job's intent; the job's next outcome record says what came
// of it.
func (e *Engine) control(ctx context.Context, actor action.Actor, j Job, verb string) error {
	rec := e.record(j, actor, action.PhaseIntent)
	rec.Ref, rec.Args["control"] = j.Intent, verb
	rec.Summary = verb + ": " + rec.Summary
	if _, err := e.o.Runner.Audit().Append(ctx, rec); err != nil {
		e.o.Log.Warn("bulk: "+verb+" not recorded", "job", j.ID, "err", err)
		return err
	}
	return nil
}

// Resume runs a cancelled or failed job on from where it stopped (a job
// cancelled while counting is counted again by a new preview instead),
// as a compare-and-set under its lease. Who resumed is recorded before
// any key is touched.
func (e *Engine) Resume(ctx context.Context, actor action.Actor, id string) (Job, error) {
	if err := e.admin(actor); err != nil {
		return Job{}, err
	}
	j, err := e.Job(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if err := resumable(j); err != nil {
		return Job{}, err
	}
	afterRead("resume")
	ok, err := e.acquire(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if !ok {
		return Job{}, statef("the job is still stopping elsewhere; resume it in a moment")
	}
	var was Job
	j, err = e.transition(ctx, id, func(j *Job) error {
		if err := resumable(*j); err != nil {
			return err
		}
		was = *j
		j.Status, j.Error, j.Updated, j.Owner = Running, "", e.now().UTC(), e.o.Owner
		return nil
	}, func(p redis.Pipeliner) { p.HDel(ctx, e.jobKey(id), "cancel") })
	if err != nil {
		e.release(ctx, id)
		return Job{}, err
	}
	if err := e.control(ctx, actor, j, "resume"); err != nil {
		_ = e.saveHeld(ctx, was, true) // not resumed: an unrecorded run acts on nothing
		return Job{}, err
	}
	e.spawn(id, func(ctx context.Context) { e.run(ctx, id) })
	return j, nil
}

func resumable(j Job) error {
	switch {
	case j.Status != Cancelled && j.Status != Failed || j.Intent == "":
		return statef("only a job that ran and was cancelled or failed can be resumed; this one is %s", j.Status)
	case j.UndoneBy != "":
		return statef("the job was undone by bulk job %s; resuming it would act on the rest with no undo", j.UndoneBy)
	}
	return nil
}

// Undo makes the job that reverses job id: its items are the priors id
// recorded, each expected in the state id left. Start runs it. A job is
// undone once (a second Undo is refused), in full or as far as it got
// (a cancelled job).
func (e *Engine) Undo(ctx context.Context, actor action.Actor, id string) (Job, error) {
	if err := e.admin(actor); err != nil {
		return Job{}, err
	}
	orig, err := e.Job(ctx, id)
	if err != nil {
		return Job{}, err
	}
	switch {
	case orig.Spec.Kind == KindUndo:
		return Job{}, fmt.Errorf("%w: an undo job is not undone in turn", action.ErrNotUndoable)
	case !orig.Undoable:
		return Job{}, fmt.Errorf("%w: %s", action.ErrNotUndoable, orig.UndoReason)
	case orig.Status == Running || orig.Status == Counting || orig.Status == Counted:
		return Job{}, statef("the job is %s; cancel it first, then undo what it did", orig.Status)
	case orig.UndoneBy != "":
		return Job{}, fmt.Errorf("%w: already undone by bulk job %s", action.ErrNotUndoable, orig.UndoneBy)
	}
	k, _ := KindOf(KindUndo)
	j := e.newJob(actor, Spec{Kind: KindUndo, Sel: orig.Spec.Sel, Undoes: id}, k)
	j.Spec.Sel.Family, j.Spec.Sel.Pattern = orig.Spec.Sel.Family, orig.Spec.Sel.Pattern
	if err := e.undoItems(ctx, &j, id); err != nil {
		return Job{}, err
	}
	j.Status = Counted
	e.decideUndo(&j)
	j.Updated = e.now().UTC()
	return j, e.save(ctx, j)
}

// claimUndo marks orig undone by the undo job by as it starts, once.
func (e *Engine) claimUndo(ctx context.Context, orig, by string) error {
	err := e.o.Audit.Watch(ctx, func(tx *redis.Tx) error {
		j, err := e.Job(ctx, orig)
		if err != nil {
			return err
		}
		switch {
		case j.UndoneBy != "" && j.UndoneBy != by:
			return fmt.Errorf("%w: already undone by bulk job %s", action.ErrNotUndoable, j.UndoneBy)
		case j.Status == Running || j.Status == Counting || j.Status == Counted:
			return statef("the job it undoes is %s again since this undo was previewed; cancel it, then preview its undo again", j.Status)
		}
		j.UndoneBy = by
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { e.queueSave(ctx, p, j); return nil })
		return err
	}, e.jobKey(orig))
	if errors.Is(err, redis.TxFailedErr) {
		return fmt.Errorf("%w: another undo of this job started at the same moment", action.ErrNotUndoable)
	}
	if err != nil && !errors.Is(err, action.ErrNotUndoable) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrState) {
		return auditErr(err)
	}
	return err
}

// unclaimUndo gives back the claim of an undo job j that failed to start
// (best effort: the claim names j, which never ran).
func (e *Engine) unclaimUndo(ctx context.Context, j Job) {
	if j.Spec.Kind != KindUndo {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_ = e.o.Audit.Watch(ctx, func(tx *redis.Tx) error {
		orig, err := e.Job(ctx, j.Spec.Undoes)
		if err != nil || orig.UndoneBy != j.ID {
			return err
		}
		orig.UndoneBy = ""
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { e.queueSave(ctx, p, orig); return nil })
		return err
	}, e.jobKey(j.Spec.Undoes))
}

// undoItems copies orig's priors into the undo job's items.
func (e *Engine) undoItems(ctx context.Context, j *Job, orig string) error {
	const page = 1000
	for from := int64(0); ; from += page {
		raw, err := e.o.Audit.LRange(ctx, e.priors(orig), from, from+page-1).Result()
		if err != nil {
			return auditErr(err)
		}
		items := make([]any, 0, len(raw))
		for _, s := range raw {
			p, err := decodePrior(s)
			if err != nil {
				return auditErr(err)
			}
			items = append(items, encodeItem(Item{Key: p.Key, Print: p.After, Payload: encodeUndo(p)}))
			if len(j.Sample) < SampleSize {
				j.Sample = append(j.Sample, p.Key)
			}
			j.DumpBytes += int64(len(p.Prior.Dump))
		}
		if len(items) > 0 {
			if err := e.o.Audit.RPush(ctx, e.items(j.ID), items...).Err(); err != nil {
				return auditErr(err)
			}
		}
		j.Count += int64(len(items))
		if len(raw) < page {
			return nil
		}
	}
}

// Prepare makes a job of given items (an import: each a key and the
// payload spec.Kind's Queue writes) in spec.Sel's database, reading each
// key's current state as the state the job expects (Absent for a new
// key). Start runs it; what the preview showed is what it acts on.
func (e *Engine) Prepare(ctx context.Context, actor action.Actor, conn *redisview.Conn, spec Spec, items []Item) (Job, error) {
	if err := e.admin(actor); err != nil {
		return Job{}, err
	}
	k, err := e.checkSpec(spec)
	if err != nil {
		return Job{}, err
	}
	if spec.Kind == KindUndo || spec.Kind == KindDelete || spec.Kind == KindExpire || spec.Kind == KindPersist {
		return Job{}, invalidf("kind %s is counted from a selection (Count), not prepared", spec.Kind)
	}
	if int64(len(items)) > e.o.MaxKeys {
		return Job{}, invalidf("%d keys, more than the %d one bulk job may act on", len(items), e.o.MaxKeys)
	}
	if err := e.fingerprintKey(ctx); err != nil {
		return Job{}, err
	}
	spec.Sel.Conn = conn.Name
	j := e.newJob(actor, spec, k)
	c := conn.DB(spec.Sel.DB)
	for from := 0; from < len(items); from += ScanCount {
		page := items[from:min(len(items), from+ScanCount)]
		if err := e.preparePage(ctx, conn, c, &j, page); err != nil {
			return Job{}, err
		}
	}
	j.Status = Counted
	e.decideUndo(&j)
	j.Updated = e.now().UTC()
	return j, e.save(ctx, j)
}

func (e *Engine) preparePage(ctx context.Context, conn *redisview.Conn, c redis.Cmdable, j *Job, page []Item) error {
	keys := make([]string, len(page))
	for i, it := range page {
		if e.o.Runner != nil && e.o.Runner.Protected(it.Key) {
			return invalidf("%q is one of Keydeck's own keys, which nothing here may change", it.Key)
		}
		if conn.Sensitive(j.Spec.Sel.DB, it.Key) {
			// Its payload (a value) would be stored in the audit Redis.
			return invalidf("key %s is of a sensitive family, whose values are never recorded: it cannot be imported", quoteKey(it.Key))
		}
		keys[i] = it.Key
	}
	states, err := e.readStates(ctx, c, keys)
	if err != nil {
		return conn.WrapErr(err)
	}
	enc := make([]any, len(page))
	for i, it := range page {
		it.Print = e.p.print(states[i])
		s := encodeItem(it)
		enc[i] = s
		e.tally(j, conn, it.Key, states[i], len(s))
	}
	if err := e.o.Audit.RPush(ctx, e.items(j.ID), enc...).Err(); err != nil {
		return auditErr(err)
	}
	return nil
}
