package action

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views/format"
)

// Execute performs a previewed action, atomically, if the keys are still
// exactly as previewed, recording an intent before and an outcome after.
// The role is checked again here: the handler's check is not trusted.
//
// On failure the returned Outcome still names the audit records written.
func (r *Runner) Execute(ctx context.Context, actor Actor, conn *redisview.Conn, pv Preview) (Outcome, error) {
	req := cloneRequest(pv.Request)
	out := Outcome{Kind: pv.Kind, Request: req}
	rec := newRecord(actor, pv.Kind, req)
	k, p, keys, err := r.plan(ctx, actor, conn, pv.Kind, req)
	rec.Args = r.recordedArgs(conn, k, req, keys)
	if sp, ok := p.(serverPlanned); ok && err == nil {
		return r.executeServer(ctx, k, conn, pv, sp, rec, out)
	}
	w := withheldKeys(conn, k, req, p, keys)
	if err == nil {
		err = r.checkPreview(pv, len(keys))
	}
	if err == nil {
		// A confirmation whose keys span slots was not made by this
		// console's preview (or the plan's keys moved): refused, recorded.
		err = w.err(checkSlots(conn, p, keys))
	}
	if err == nil {
		// Claimed before anything else is written: a confirmation runs at
		// most once, whatever happens next (preview again to retry).
		err = r.audit.claimConfirmation(ctx, pv.Nonce, r.opts.PreviewTTL+clockSkew)
		if errors.Is(err, ErrAuditUnavailable) {
			r.tally.add(k.Name(), OutcomeFailed)
			return out, err
		}
	}
	if err != nil {
		if k != nil { // an unknown kind name is noise, not an attempt
			if keys != nil {
				rec.Keys = w.keys(keys)
			}
			r.settle(ctx, &out, rec, "", err)
		}
		return out, err
	}
	rec.Keys = w.keys(keys)
	if u, ok := p.(undoer); ok {
		rec.Undoes = u.undoes()
	}

	x := &execution{pv: pv, conn: conn, db: req.DB, p: p, keys: keys, w: w, rec: &rec, out: &out}
	var post []State
	err = retryOnCluster(ctx, conn, req.DB, func() error {
		var err error
		post, err = r.commitWatched(ctx, x)
		if err != nil && !isOurs(err) {
			err = redisErr("watching the keys", err)
		}
		if x.committing && isUnreachable(err) {
			return lostErr{err} // not tried again: EXEC may have been sent
		}
		return err
	})
	var lost lostErr
	switch {
	case errors.As(err, &lost):
		// The connection failed with EXEC on its way or its reply (a
		// primary killed, a failover): read the keys again to tell
		// whether the change was made.
		post, err = r.settleLost(ctx, x, lost)
	case errors.Is(err, ErrRedis) && !x.committing:
		// Redis failed before any EXEC was sent: nothing was written, so
		// this confirmation has not run and may be confirmed again.
		r.audit.releaseConfirmation(ctx, pv.Nonce)
	}
	err = w.err(err)
	if errors.Is(err, ErrAuditUnavailable) {
		r.tally.add(k.Name(), OutcomeFailed)
		return out, err // the audit server cannot take the failure record either
	}
	if err == nil {
		rec.Targets = w.targets(postTargets(post))
	} else {
		rec.Targets = nil
	}
	r.settle(ctx, &out, rec, out.IntentID, err)
	return out, err
}

// newRecord is the audit record of actor's action kind on req, before
// the plan says which keys it touches.
func newRecord(actor Actor, kind string, req Request) Record {
	rec := Record{User: actor.User, Level: actor.Level.String(), Token: actor.Token, TokenOwner: actor.TokenOwner,
		Action: kind, Conn: req.Conn, DB: req.DB, Args: req.Args}
	if req.Key != "" {
		rec.Keys = []string{req.Key}
	}
	return rec
}

// execution is one confirmed action on its way through WATCH: what its
// attempts share, and the outcome and audit record they fill in.
type execution struct {
	pv   Preview
	conn *redisview.Conn
	db   int
	p    Plan
	keys []string
	w    withheld
	rec  *Record
	out  *Outcome
	// committing is set once the current attempt's MULTI/EXEC may have
	// been sent (reset by each attempt): before that, a failure has
	// changed nothing.
	committing bool
	sentAt     time.Time // when the last attempt's EXEC was sent
}

// commitWatched runs the action under WATCH, retrying a MemberPlan that
// raced with writers of the rest of its sorted set, and returns the states
// it left.
func (r *Runner) commitWatched(ctx context.Context, x *execution) ([]State, error) {
	members := memberRefs(x.p, x.keys)
	attempts := 1
	if members != nil {
		// WATCH sees a whole sorted set; see MemberPlan.
		attempts += memberRetries
	}
	watch := x.keys
	pp, _ := x.p.(preparer)
	if pp != nil {
		watch = append(slices.Clone(x.keys), pp.watched()...)
	}
	var post []State
	var err error
	for attempt := 1; ; attempt++ {
		// Only an attempt whose EXEC was written counts: an earlier one's
		// aborted EXEC (errRaced) applied nothing.
		x.committing = false
		err = x.conn.DB(x.db).Watch(ctx, func(tx *redis.Tx) error {
			if pp != nil {
				if err := pp.prepare(ctx, tx); err != nil {
					return err
				}
			}
			var err error
			post, err = r.attempt(ctx, tx, x, members)
			return err
		}, watch...)
		if !errors.Is(err, errRaced) || attempt == attempts {
			break
		}
		// A jittered pause keeps retries out of step with a writer that
		// writes on a steady beat.
		time.Sleep(time.Duration(mrand.IntN(3000)) * time.Microsecond)
	}
	if errors.Is(err, errRaced) && attempts > 1 {
		err = fmt.Errorf("%w: the keys were written by someone else during each of %d attempts to commit (a busy sorted set), though the member acted on had not changed; nothing was changed, try again", ErrChanged, attempts)
	}
	return post, err
}

// attempt is one try inside WATCH: read the keys, refuse if any differs
// from the preview, describe the change, record the intent (once), and
// commit.
func (r *Runner) attempt(ctx context.Context, tx *redis.Tx, x *execution, members []*MemberRef) ([]State, error) {
	states, err := r.readStates(ctx, tx, x.conn, x.db, x.p, x.keys)
	if err != nil {
		return nil, err
	}
	for i, s := range states {
		if s.fp != x.pv.Fingerprints[i] {
			return nil, fmt.Errorf("%w: %s; preview again", ErrChanged, changedText(s))
		}
	}
	changes, err := describe(x.p, x.w.states(states))
	if err != nil {
		return nil, err
	}
	out := x.out
	out.Changes, out.Summary = changes, summary(changes)
	out.Undoable = true
	for _, s := range states {
		out.Undoable = out.Undoable && !s.Sensitive
	}
	if out.IntentID == "" {
		// A retry reads the very state this intent recorded (every
		// fingerprint equal to the preview's), so one intent serves.
		x.rec.Summary = out.Summary
		x.rec.Targets = x.w.targets(priorTargets(states))
		intent := *x.rec
		intent.Phase = PhaseIntent
		intent.Time = r.opts.Now()
		if out.IntentID, err = r.audit.writeIntent(ctx, intent); err != nil {
			return nil, err
		}
	}
	if r.opts.beforeExec != nil {
		r.opts.beforeExec()
	}
	x.committing, x.sentAt = true, time.Now()
	post, err := r.commit(ctx, tx, x.p, states, members)
	if err != nil {
		return nil, err
	}
	return r.refingerprintForeign(ctx, tx, x, post), nil
}

// refingerprintForeign reads again, element-wise, the keys whose DUMP read
// back inside the transaction is not in Redis's format (the embedded demo):
// undo reads such a key element-wise, so its recorded fingerprint must be
// of that reading, or undo would always say the key changed. The read comes
// after EXEC, outside the transaction — on such a server only, a write
// slipping in between is recorded as the action's. A key that cannot be
// read again keeps no fingerprint: undo then refuses rather than guess.
func (r *Runner) refingerprintForeign(ctx context.Context, tx *redis.Tx, x *execution, post []State) []State {
	for i, ps := range post {
		if ps.dump == nil || checkDump(ps.dump) || ps.Sensitive || ps.Member != nil {
			continue
		}
		again, err := r.readStates(ctx, tx, x.conn, x.db, nil, []string{ps.Key}) // no plan: the whole key, as undo reads it
		if err != nil || len(again) != 1 {
			post[i] = State{Key: ps.Key, Type: ps.Type, PTTL: ps.PTTL, Size: -1, Family: ps.Family, Role: ps.Role}
			continue
		}
		post[i] = again[0]
	}
	return post
}

// recordedArgs are the request's arguments as the audit record keeps them:
// an argument naming data inside a key (Arg.Data, a member) is withheld
// when any key the action touches is of a sensitive family.
func (r *Runner) recordedArgs(conn *redisview.Conn, k Kind, req Request, keys []string) map[string]string {
	if k == nil || len(req.Args) == 0 || !dataWithheld(conn, req, keys) {
		return req.Args
	}
	out := maps.Clone(req.Args)
	for _, a := range k.Args() {
		if _, ok := out[a.Name]; ok && a.Data {
			out[a.Name] = PriorSensitive
		}
	}
	return out
}

// isOurs reports an error this package already explained.
func isOurs(err error) bool {
	for _, s := range []error{ErrForbidden, ErrChanged, ErrNotFound, ErrAuditUnavailable, ErrInvalid, ErrNotUndoable, ErrRedis} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// changedText says how a key differs from its preview: "\"k\" is now
// hash, 3 fields, no TTL", or for a member "member \"m\" of \"k\" is now
// score 12, rank #4".
func changedText(s State) string {
	if s.Member != nil && s.Sensitive {
		return fmt.Sprintf("the %s named in %s (sensitive) has changed", partNoun(s.Member.Kind), quoteKey(s.Key))
	}
	if m := s.Member; m != nil {
		now := memberShape(m)
		if want := (MemberRef{Kind: m.Kind}).keyType(); s.Exists() && s.Type != want {
			now = "gone: the key is now a " + s.Type
		}
		return fmt.Sprintf("%s %s of %s is now %s", partNoun(m.Kind), quoteKey(m.Name), quoteKey(s.Key), now)
	}
	return fmt.Sprintf("%s is now %s", quoteKey(s.Key), s.Shape())
}

func (r *Runner) checkPreview(pv Preview, n int) error {
	age := r.opts.Now().Sub(pv.Made)
	switch {
	case pv.Made.IsZero() || age < -clockSkew:
		return invalidf("the preview has no valid time; preview again")
	case age > r.opts.PreviewTTL:
		return invalidf("the preview is %s old, older than the %s a preview may be confirmed; preview again", format.Duration(age.Round(time.Second)), format.Duration(r.opts.PreviewTTL))
	case len(pv.Fingerprints) != n:
		return invalidf("the preview does not match the action; preview again")
	case pv.Nonce == "":
		return invalidf("the preview has no nonce; preview again")
	}
	return nil
}

// settle writes the outcome record. It outlives the caller's context (a
// closed browser tab must not leave an intent without an outcome), and is
// best effort: when the audit server is down the failure is still returned
// to the caller, only its record is lost.
func (r *Runner) settle(ctx context.Context, out *Outcome, rec Record, intentID string, err error) {
	rec.Phase, rec.Ref, rec.Time = PhaseOutcome, intentID, r.opts.Now()
	rec.Outcome = OutcomeOK
	if err != nil {
		rec.Outcome, rec.Error = outcomeOf(err), err.Error()
	}
	r.tally.add(rec.Action, rec.Outcome)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditDeadline)
	defer cancel()
	id, werr := r.audit.writeOutcome(actx, rec, intentID)
	out.ID = id
	if werr != nil && err == nil {
		out.AuditWarning = fmt.Sprintf("the change was made and its intent recorded (%s), but its outcome could not be recorded: %v", intentID, werr)
	}
}

func outcomeOf(err error) string {
	if errors.Is(err, ErrOutcomeUnknown) {
		return OutcomeUnknown
	}
	for _, s := range []error{ErrForbidden, ErrInvalid, ErrNotUndoable, ErrNotFound} {
		if errors.Is(err, s) {
			return OutcomeRefused
		}
	}
	return OutcomeFailed
}

func priorTargets(states []State) []Target {
	out := make([]Target, len(states))
	for i, s := range states {
		t := Target{Key: s.Key, Type: s.Type, Family: s.Family, Sensitive: s.Sensitive, Size: s.Size, Unit: s.Unit, PTTL: s.PTTL}
		switch {
		case s.Sensitive:
			t.Prior = PriorSensitive
		case s.Member != nil:
			// The member and its score are the prior; the key's DUMP is not.
			m := *s.Member
			t.Member, t.Before = &m, s.fp
		case s.snap != nil:
			t.Snapshot, t.Capture, t.Before = s.snap, captureSnapshot, s.fp
		case s.Exists():
			t.Prior = base64.StdEncoding.EncodeToString(s.dump)
			t.Before = s.fp
		default:
			t.Before = s.fp
		}
		out[i] = t
	}
	return out
}

func postTargets(states []State) []Target {
	out := make([]Target, len(states))
	for i, s := range states {
		t := Target{Key: s.Key, Type: s.Type, Sensitive: s.Sensitive, PTTL: s.PTTL}
		if !s.Sensitive {
			t.After = s.fp
			if s.snap != nil {
				t.Capture = captureSnapshot
			}
			if s.Member != nil {
				m := *s.Member
				t.Member = &m
			}
		}
		out[i] = t
	}
	return out
}
