package action

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views/format"
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
	tally  tally // outcomes settled, by kind (Tally)
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

// AuditRecord reads one record of the runner's audit stream, with the
// undo that claimed it (a successful outcome's UndoneBy), so its page can
// offer Undo only while it is still possible.
func (r *Runner) AuditRecord(ctx context.Context, id string) (Record, error) {
	rec, err := r.audit.Get(ctx, id)
	if err != nil {
		return Record{}, err
	}
	return r.audit.withClaims(ctx, []Record{rec})[0], nil
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
	p, err := k.Plan(ctx, Env{Conn: conn, Audit: r.audit, Now: r.opts.Now(), kindOf: r.Kind}, req)
	if err != nil {
		return k, nil, nil, err
	}
	if _, ok := p.(serverPlanned); ok {
		if req.Key != "" {
			return k, nil, nil, invalidf("%s acts on a server, not on a key; the request names key %s", k.Title(), quoteKey(req.Key))
		}
		return k, p, nil, nil // no keys: it acts on a server (see OnServer)
	}
	keys := p.Keys()
	if len(keys) == 0 || len(keys) > maxKeys {
		return k, nil, nil, invalidf("an action touches 1 to %d keys, not %d", maxKeys, len(keys))
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if key == "" || len(key) > maxKeyBytes {
			return k, nil, nil, invalidf("key name empty or longer than %s", format.Bytes(maxKeyBytes))
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
	if sp, ok := p.(serverPlanned); ok {
		return r.previewServer(ctx, k, conn, req, sp)
	}
	// Keys named after a withheld argument are shown by stand-ins (see
	// namedPlan), read by their names.
	w := withheldKeys(conn, k, req, p, keys)
	if err := checkSlots(conn, p, keys); err != nil {
		return Preview{}, w.err(err)
	}
	var states []State
	err = retryOnCluster(ctx, conn, req.DB, func() error {
		if pp, ok := p.(preparer); ok {
			if err := pp.prepare(ctx, conn.DB(req.DB)); err != nil {
				return err
			}
		}
		var err error
		states, err = r.readStates(ctx, conn.DB(req.DB), conn, req.DB, p, keys)
		return err
	})
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
