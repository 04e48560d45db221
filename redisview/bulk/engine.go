package bulk

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/scanbudget"
)

// Defaults of Options.
const (
	DefaultRate      = 2000     // keys per second per connection
	DefaultBatch     = 100      // keys per batch
	DefaultUndoKeys  = 10000    // priors recorded up to this many keys …
	DefaultUndoBytes = 64 << 20 // … and this many bytes of DUMP
	DefaultLease     = 15 * time.Second
	DefaultPrefix    = "keydeck:bulk:"
	// DefaultMaxKeyBytes is the largest value a job reads (DUMP), as the
	// action runner's default MaxPriorBytes.
	DefaultMaxKeyBytes = 1 << 20
	DefaultMaxKeys     = 2_000_000 // keys one job may count
	DefaultPreviewTTL  = time.Hour // records of a job never started
)

// Options configure an Engine.
type Options struct {
	// Audit is the audit Redis (the action runner's client): job state,
	// items, priors and leases live there.
	Audit *redis.Client
	// Runner's Protected keys are never selected, and jobs are recorded
	// in its audit stream.
	Runner *action.Runner
	// Conns resolves a job's connection by name (a job taken over after a
	// restart has only its name).
	Conns func(name string) (*redisview.Conn, error)
	// Rate is how many keys a second the jobs of one connection read
	// (count) and act on together, shared fairly between the users who
	// run them (more jobs do not buy a user more rate). The budget is
	// this process's: N Keydeck replicas give a connection N × Rate.
	// Batch is how many keys one batch (one WATCH … EXEC) holds.
	Rate  int
	Batch int
	// UndoKeys and UndoBytes bound the priors a job records: a job of more
	// keys, or of more DUMP bytes, cannot be undone.
	UndoKeys  int64
	UndoBytes int64
	// Lease is how long a job's owner is trusted without renewing; a
	// running job whose lease lapsed is taken over.
	Lease time.Duration
	// MaxKeyBytes: a key whose value is larger is never read (DUMP); it
	// is fingerprinted by type, expiry and length and its job cannot be
	// undone. MaxKeys bounds a count: past it the count stops (narrow the
	// selection). PreviewTTL is how long the records of a job never
	// started (counted, or cancelled before it ran) stay in the audit
	// Redis; a started job's stay 400 days.
	MaxKeyBytes int64
	MaxKeys     int64
	PreviewTTL  time.Duration
	// Prefix of every key the engine writes (default DefaultPrefix).
	Prefix string
	// Owner names this engine in leases (default: random).
	Owner string
	Clock clock.Clock
	Log   *slog.Logger
}

// Engine counts, runs, cancels, resumes and undoes bulk jobs. One per
// Keydeck process; every engine on one audit Redis shares the jobs.
type Engine struct {
	o      Options
	p      printer
	ctx    context.Context // jobs run under it, past the request that started them
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	budget map[string]*scanbudget.Budget // per connection
	mine   map[string]context.CancelFunc // jobs this engine runs or counts
}

// New builds an engine. Call Run to take over jobs whose owner died, and
// Close to stop.
func New(o Options) *Engine {
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.UndoKeys == 0 {
		o.UndoKeys = DefaultUndoKeys
	}
	if o.UndoBytes == 0 {
		o.UndoBytes = DefaultUndoBytes
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.MaxKeyBytes <= 0 {
		o.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.PreviewTTL <= 0 {
		o.PreviewTTL = DefaultPreviewTTL
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Owner == "" {
		o.Owner = randomID()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Clock = clock.Or(o.Clock)
	ctx, stop := context.WithCancel(context.Background())
	return &Engine{o: o, ctx: ctx, stop: stop,
		budget: map[string]*scanbudget.Budget{}, mine: map[string]context.CancelFunc{}}
}

// Options are the engine's options, defaults filled in.
func (e *Engine) Options() Options { return e.o }

// Close stops the jobs this engine runs (they stay Running with a lapsing
// lease, for another engine, or this one restarted, to take over) and
// waits for them.
func (e *Engine) Close() {
	e.stop()
	e.wg.Wait()
}

// spawn runs f under the engine's context as the worker named (a job's
// id, or "count:" and its id), unless this engine already runs it.
func (e *Engine) spawn(id string, f func(ctx context.Context)) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, busy := e.mine[id]; busy || e.ctx.Err() != nil {
		return false
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.mine[id] = cancel
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.mine, id)
			e.mu.Unlock()
			cancel()
		}()
		f(ctx)
	}()
	return true
}

// rate is the connection's execution budget.
func (e *Engine) rate(conn string) *scanbudget.Budget {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.budget[conn]
	if b == nil {
		b = scanbudget.New(float64(e.o.Rate), e.o.Clock)
		e.budget[conn] = b
	}
	return b
}

func (e *Engine) now() time.Time { return e.o.Clock.Now() }

// fingerprintKey loads the key of the fingerprints, made once (SET NX)
// in the audit Redis where the items and priors it signs are: every
// replica and restart shares it, and it does not change when the session
// secret is rotated (which would make every stored fingerprint differ,
// every key of a resumed job or an undo "changed").
func (e *Engine) fingerprintKey(ctx context.Context) error {
	if e.p.secret.Load() != nil {
		return nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	k := e.o.Prefix + "fingerprint-key"
	if err := e.o.Audit.SetNX(ctx, k, hex.EncodeToString(b), 0).Err(); err != nil {
		return auditErr(err)
	}
	v, err := e.o.Audit.Get(ctx, k).Result()
	if err != nil {
		return auditErr(err)
	}
	m := hmac.New(sha256.New, []byte(v))
	m.Write([]byte("keydeck/bulk/fingerprint/v1"))
	secret := m.Sum(nil)
	e.p.secret.Store(&secret)
	return nil
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newID names a job: its creation time, then randomness (sortable, and
// safe in a URL path).
func (e *Engine) newID() string {
	return e.now().UTC().Format("20060102T150405") + "-" + randomID()[:10]
}

// admin refuses anyone below admin, and a read-only Keydeck.
func (e *Engine) admin(actor action.Actor) error {
	switch {
	case actor.User == "":
		return fmt.Errorf("%w: bulk actions are recorded by user name, and none was given", action.ErrForbidden)
	case !actor.Level.Allows(action.Admin):
		return fmt.Errorf("%w: bulk actions need the admin role; %s is %s", action.ErrForbidden, actor.User, actor.Level)
	case e.o.Runner != nil && !e.o.Runner.Allowed(actor, action.KindDeleteKey):
		return fmt.Errorf("%w: Keydeck runs read-only; every action is disabled", action.ErrForbidden)
	}
	return nil
}
