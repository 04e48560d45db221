package action

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Options configure a Runner; the zero value is usable.
type Options struct {
	Stream string // audit stream key; default DefaultStream
	MaxLen int64  // audit stream cap (MAXLEN ~); default DefaultMaxLen
	// MaxPriorBytes caps the DUMP an audit record may hold (default 1 MiB;
	// negative: no cap). A larger key cannot be acted on: it could not be
	// undone, and serializing it would block the server.
	MaxPriorBytes int
	// PreviewTTL is how long a preview may be confirmed (default 15m).
	PreviewTTL time.Duration
	// Secret keys the fingerprints of sensitive values. Replicas behind one
	// load balancer must share it (a preview made on one is confirmed on
	// another); when empty a random one is made, valid for this process.
	Secret []byte
	// ReadOnly refuses every action for every role.
	ReadOnly bool
	// Kinds are offered after the registered ones (see Register).
	Kinds []Kind
	// Now is the clock; default time.Now.
	Now func() time.Time

	beforeExec func() // tests: runs between the intent record and EXEC
}

// Runner previews, executes and audits actions. It is safe for concurrent use.
type Runner struct {
	audit  *Audit
	opts   Options
	secret []byte
	kinds  map[string]Kind
	order  []Kind
}

const (
	maxKeys       = 64
	maxKeyBytes   = 64 << 10
	maxDB         = 1 << 16
	clockSkew     = time.Minute
	auditDeadline = 5 * time.Second
)

// New builds a Runner that records to audit: a client on the audit server
// and database (by default, database 15 of the first connection).
func New(audit *redis.Client, opts Options) *Runner {
	if opts.MaxPriorBytes == 0 {
		opts.MaxPriorBytes = 1 << 20
	}
	if opts.PreviewTTL <= 0 {
		opts.PreviewTTL = 15 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Runner{audit: NewAudit(audit, opts.Stream, opts.MaxLen), opts: opts, kinds: map[string]Kind{}}
	secret := opts.Secret
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	// Derived, so the session secret the handler likely passes is never
	// used as is for a second purpose.
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("keydeck/action/fingerprint/v1"))
	r.secret = m.Sum(nil)
	for _, k := range append(registered(), opts.Kinds...) {
		if _, dup := r.kinds[k.Name()]; dup {
			panic("action: kind " + k.Name() + " registered twice")
		}
		r.kinds[k.Name()] = k
		r.order = append(r.order, k)
	}
	return r
}

// Kinds lists the registered actions, for the UI.
func (r *Runner) Kinds() []Kind { return append([]Kind(nil), r.order...) }

// Kind finds an action by name.
func (r *Runner) Kind(name string) (Kind, bool) { k, ok := r.kinds[name]; return k, ok }

// Audit is the audit stream the runner writes.
func (r *Runner) Audit() *Audit { return r.audit }

// ReadAudit reads one page of the runner's audit stream (see ReadAudit).
func (r *Runner) ReadAudit(ctx context.Context, f Filter) ([]Record, string, error) {
	return r.audit.Read(ctx, f)
}

// Allowed reports whether actor's role may run the kind named, for hiding
// buttons (a page rendered once per role passes an Actor without a user).
// Execute checks again, user name included; this is not the guard.
func (r *Runner) Allowed(actor Actor, kind string) bool {
	k, ok := r.kinds[kind]
	return ok && !r.opts.ReadOnly && actor.Level.Allows(k.Requires())
}

func (r *Runner) allow(actor Actor, k Kind) error {
	switch {
	case r.opts.ReadOnly:
		return fmt.Errorf("%w: Keydeck runs read-only; every action is disabled", ErrForbidden)
	case strings.TrimSpace(actor.User) == "":
		return fmt.Errorf("%w: actions are recorded by user name, and none was given", ErrForbidden)
	case !actor.Level.Allows(k.Requires()):
		return fmt.Errorf("%w: %s needs the %s role; %s is %s", ErrForbidden, k.Title(), k.Requires(), actor.User, actor.Level)
	}
	return nil
}

// Protected reports a key that belongs to Keydeck itself — the audit log
// and its claims, the session signing key, sign-in counters — which no
// action may change, on any connection: pages offer no action on it.
func (r *Runner) Protected(key string) bool {
	return key == r.audit.stream || strings.HasPrefix(key, r.audit.stream+":") || strings.HasPrefix(key, "keydeck:")
}

// plan checks everything that needs no Redis and asks the kind for its plan.
func (r *Runner) plan(ctx context.Context, actor Actor, conn *redisview.Conn, kind string, req Request) (Kind, Plan, []string, error) {
	k, ok := r.kinds[kind]
	if !ok {
		return nil, nil, nil, invalidf("unknown action %q", kind)
	}
	if err := r.allow(actor, k); err != nil {
		return k, nil, nil, err
	}
	switch {
	case conn == nil:
		return k, nil, nil, invalidf("no connection")
	case req.Conn != conn.Name:
		return k, nil, nil, invalidf("the request names connection %q, not %q", req.Conn, conn.Name)
	case req.DB < 0 || req.DB > maxDB:
		return k, nil, nil, invalidf("database %d out of range", req.DB)
	}
	p, err := k.Plan(ctx, Env{Conn: conn, Audit: r.audit, Now: r.opts.Now()}, req)
	if err != nil {
		return k, nil, nil, err
	}
	keys := p.Keys()
	if len(keys) == 0 || len(keys) > maxKeys {
		return k, nil, nil, invalidf("an action touches 1 to %d keys, not %d", maxKeys, len(keys))
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if key == "" || len(key) > maxKeyBytes {
			return k, nil, nil, invalidf("key name empty or longer than %s", redisview.FormatBytes(maxKeyBytes))
		}
		if r.Protected(key) {
			// By name on every server: an address alias must not open a way
			// to erase the record of what was done, nor to copy Keydeck's
			// own state (the session signing key) into an audit record.
			return k, nil, nil, fmt.Errorf("%w: %s belongs to Keydeck itself (audit log, signing key, sign-in counters) and cannot be changed through Keydeck", ErrForbidden, quoteKey(key))
		}
		if seen[key] {
			return k, nil, nil, invalidf("key %s named twice", quoteKey(key))
		}
		seen[key] = true
	}
	return k, p, keys, nil
}

// Preview reads the keys and says exactly what the action would do. It
// writes nothing and records nothing.
func (r *Runner) Preview(ctx context.Context, actor Actor, conn *redisview.Conn, kind string, req Request) (Preview, error) {
	req = cloneRequest(req)
	k, p, keys, err := r.plan(ctx, actor, conn, kind, req)
	if err != nil {
		return Preview{}, err
	}
	// Keys named after a withheld argument are shown by stand-ins (see
	// namedPlan), read by their names.
	w := withheldKeys(conn, k, req, p, keys)
	if pp, ok := p.(preparer); ok {
		if err := pp.prepare(ctx, conn.DB(req.DB)); err != nil {
			return Preview{}, w.err(err)
		}
	}
	states, err := r.readStates(ctx, conn.DB(req.DB), conn, req.DB, p, keys)
	if err != nil {
		return Preview{}, w.err(err)
	}
	changes, err := describe(p, w.states(states))
	if err != nil {
		return Preview{}, w.err(err)
	}
	if a, ok := p.(argPlan); ok {
		req.Args = a.previewArgs(req.Args)
	}
	pv := Preview{Kind: k.Name(), Title: k.Title(), Request: req, Changes: changes, Summary: summary(changes), Undoable: true, Made: r.opts.Now(), Nonce: newNonce()}
	if a, ok := p.(Annotated); ok {
		pv.Notes = append(pv.Notes, a.Notes()...)
	}
	pv.Notes = append(pv.Notes, dangers(conn, req.DB, keys, changes)...)
	for _, s := range states {
		pv.Fingerprints = append(pv.Fingerprints, s.fp)
		if s.Sensitive {
			pv.Undoable = false
			pv.Notes = append(pv.Notes, fmt.Sprintf("The value of %s is sensitive (%s): it is not shown and not recorded, so this cannot be undone.", quoteKey(w.key(s.Key)), s.Family))
		}
	}
	return pv, nil
}

// argPlan is implemented by a plan whose keys were found by a read that
// may find others by the confirm step (the concurrency sets of a release):
// the preview's request carries them (previewArgs returns the request's
// arguments plus theirs), so the confirmation plans the very keys
// previewed.
type argPlan interface {
	previewArgs(args map[string]string) map[string]string
}

// preparer is implemented by a plan whose writes are computed from more
// than the state of its keys: a bloom rebuilt from its set. prepare reads
// that on c before the keys' states are read — at preview on a plain
// connection, at execution on the one that WATCHes the keys and the keys
// watched() names, so that nothing it read can change before EXEC without
// EXEC failing. The keys watched() names are read only: neither written,
// nor fingerprinted, nor recorded (a set of any size may be one).
type preparer interface {
	watched() []string
	prepare(ctx context.Context, c redis.Cmdable) error
}

// dangers are the pack's warnings (Family.Danger) for the keys an action
// writes: what losing such a key does to the application. changes[i] is
// keys[i]'s, under the name it is shown by.
func dangers(conn *redisview.Conn, db int, keys []string, changes []Change) []string {
	cls := conn.Classifier()
	if cls == nil {
		return nil
	}
	var out []string
	for i, ch := range changes {
		if ch.Op == "none" {
			continue
		}
		if f, ok := cls.Classify(db, keys[i]); ok && f.Danger != "" {
			out = append(out, fmt.Sprintf("Careful: %s is of family %s. %s", quoteKey(ch.Key), f.ID, f.Danger))
		}
	}
	return out
}

// describe asks the plan for its changes and strips the value bytes from
// the states they carry: a Preview or Outcome printed with %+v into a log
// must not spell out a sensitive value as a list of bytes.
func describe(p Plan, states []State) ([]Change, error) {
	changes, err := p.Describe(states)
	if err != nil {
		return nil, err
	}
	if len(changes) != len(states) {
		return nil, fmt.Errorf("%w: the action described %d changes for %d keys", ErrInvalid, len(changes), len(states))
	}
	for i := range changes {
		b := &changes[i].Before
		b.dump, b.fp, b.fpLegacy, b.expireAt = nil, "", "", 0
		if b.Sensitive {
			// A member of a sensitive key, its score or value, is data.
			b.Member, b.Excerpt = nil, ""
		}
	}
	return changes, nil
}

func summary(changes []Change) string {
	texts := make([]string, len(changes))
	for i, c := range changes {
		texts[i] = c.Text
	}
	return strings.Join(texts, "; ")
}

// Execute performs a previewed action, atomically, if the keys are still
// exactly as previewed, recording an intent before and an outcome after.
// The role is checked again here: the handler's check is not trusted.
//
// On failure the returned Outcome still names the audit records written.
func (r *Runner) Execute(ctx context.Context, actor Actor, conn *redisview.Conn, pv Preview) (Outcome, error) {
	req := cloneRequest(pv.Request)
	out := Outcome{Kind: pv.Kind, Request: req}
	rec := Record{User: actor.User, Level: actor.Level.String(), Action: pv.Kind, Conn: req.Conn, DB: req.DB, Args: req.Args}
	if req.Key != "" {
		rec.Keys = []string{req.Key}
	}
	k, p, keys, err := r.plan(ctx, actor, conn, pv.Kind, req)
	rec.Args = r.recordedArgs(conn, k, req, keys)
	w := withheldKeys(conn, k, req, p, keys)
	if err == nil {
		err = r.checkPreview(pv, keys)
	}
	if err == nil {
		// Claimed before anything else is written: a confirmation runs at
		// most once, whatever happens next (preview again to retry).
		err = r.audit.claimConfirmation(ctx, pv.Nonce, r.opts.PreviewTTL+clockSkew)
		if errors.Is(err, ErrAuditUnavailable) {
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

	members := memberRefs(p, keys)
	attempts := 1
	if members != nil {
		// WATCH sees a whole sorted set; see MemberPlan.
		attempts += memberRetries
	}
	watch := keys
	pp, _ := p.(preparer)
	if pp != nil {
		watch = append(slices.Clone(keys), pp.watched()...)
	}
	var post []State
	for attempt := 1; ; attempt++ {
		err = conn.DB(req.DB).Watch(ctx, func(tx *redis.Tx) error {
			if pp != nil {
				if err := pp.prepare(ctx, tx); err != nil {
					return err
				}
			}
			states, err := r.readStates(ctx, tx, conn, req.DB, p, keys)
			if err != nil {
				return err
			}
			for i, s := range states {
				if s.fp != pv.Fingerprints[i] {
					return fmt.Errorf("%w: %s; preview again", ErrChanged, changedText(s))
				}
			}
			changes, err := describe(p, w.states(states))
			if err != nil {
				return err
			}
			out.Changes, out.Summary = changes, summary(changes)
			out.Undoable = true
			for _, s := range states {
				out.Undoable = out.Undoable && !s.Sensitive
			}
			if out.IntentID == "" {
				// A retry reads the very state this intent recorded (every
				// fingerprint equal to the preview's), so one intent serves.
				rec.Summary = out.Summary
				rec.Targets = w.targets(priorTargets(states))
				intent := rec
				intent.Phase = PhaseIntent
				intent.Time = r.opts.Now()
				if out.IntentID, err = r.audit.writeIntent(ctx, intent); err != nil {
					return err
				}
			}
			if r.opts.beforeExec != nil {
				r.opts.beforeExec()
			}
			post, err = r.commit(ctx, tx, p, states, members)
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
	if err != nil && !isOurs(err) {
		err = redisErr("watching the keys", err)
	}
	err = w.err(err)
	if errors.Is(err, ErrAuditUnavailable) {
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

func (r *Runner) checkPreview(pv Preview, keys []string) error {
	age := r.opts.Now().Sub(pv.Made)
	switch {
	case pv.Made.IsZero() || age < -clockSkew:
		return invalidf("the preview has no valid time; preview again")
	case age > r.opts.PreviewTTL:
		return invalidf("the preview is %s old, older than the %s a preview may be confirmed; preview again", FormatTTL(age.Round(time.Second)), FormatTTL(r.opts.PreviewTTL))
	case len(pv.Fingerprints) != len(keys):
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
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditDeadline)
	defer cancel()
	id, werr := r.audit.writeOutcome(actx, rec, intentID)
	out.ID = id
	if werr != nil && err == nil {
		out.AuditWarning = fmt.Sprintf("the change was made and its intent recorded (%s), but its outcome could not be recorded: %v", intentID, werr)
	}
}

func outcomeOf(err error) string {
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
