// Package lease lets Keydeck replicas that share one audit Redis agree on
// which of them does a piece of background work (a database's statistics
// sweep, a connection's health probe): the one holding the work's lease, a
// key set with SET NX PX to the holder's process id and a counter (one
// token per Lease) and renewed by its
// holder with a compare-and-renew script. A holder that dies stops
// renewing; its lease expires after TTL and another replica takes it.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
)

// The lease's timing: a holder renews every Renew a lease that lasts TTL,
// so two renewals may fail (a slow or restarting audit Redis) before it
// is lost; a waiting replica tries every Renew, so a dead holder's work
// is taken over within TTL+Renew (8 s).
const (
	TTL   = 6 * time.Second
	Renew = 2 * time.Second
)

// NewID is a random identity for this process: the value its leases hold.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Shared is the audit Redis the replicas share and this process's
// identity there. A nil *Shared means a console on its own: no lease, it
// does everything itself.
type Shared struct {
	Client *redis.Client
	ID     string
	Clock  clock.Clock // renewal timing (the connections' clock)
	// TTL and Renew default to the package's.
	TTL, Renew time.Duration
	// Log is told when this process starts working alone, cut off from
	// the audit Redis, and when it shares again (nil: not told).
	Log *slog.Logger

	alone atomic.Int64 // leases worked alone now
	runs  atomic.Int64 // leases made (New)
}

func (s *Shared) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

func (s *Shared) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return TTL
}

// Every is how often a holder renews and a waiting replica tries.
func (s *Shared) Every() time.Duration {
	if s.Renew > 0 {
		return s.Renew
	}
	return Renew
}

// renewScript extends the lease when this process holds it, and takes it
// again when the key is gone (the audit Redis restarted empty, or the
// lease expired while the holder could not reach it, and nobody took it
// since): the holder keeps working rather than every replica stopping.
// Another holder's lease is left alone (0).
var renewScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`)

// acquireScript takes the lease when nobody holds it (SET NX PX), or when
// its key already holds this process's id (a renewal that timed out on
// the client but ran, an audit Redis restored with the lease): a bare
// SET NX would make the holder wait, and nobody sweep, for up to TTL.
var acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// releaseScript deletes the lease when this process holds it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// Lease is one piece of work's lease.
type Lease struct {
	s     *Shared
	key   string
	token string
}

// New is the lease named key, held under a token of its own: the process's
// id and a counter, so that a work stopped and started again in one
// process (a lingering sweeper's restart) never takes, renews or releases
// the lease of the one before or after it.
func (s *Shared) New(key string) *Lease {
	return &Lease{s: s, key: key, token: s.ID + ":" + strconv.FormatInt(s.runs.Add(1), 10)}
}

// Token is the value the lease's key holds while this Lease holds it.
func (l *Lease) Token() string { return l.token }

// HolderID is the process id of a lease's holder, from its key's value.
func HolderID(token string) string {
	if i := strings.LastIndexByte(token, ':'); i >= 0 {
		return token[:i]
	}
	return token
}

// Key is the lease's key in the audit Redis.
func (l *Lease) Key() string { return l.key }

// TryAcquire takes the lease when nobody holds it, or when it already
// holds this process's id (see acquireScript).
func (l *Lease) TryAcquire(ctx context.Context) (bool, error) {
	n, err := acquireScript.Run(ctx, l.s.Client, []string{l.key}, l.token, l.s.ttl().Milliseconds()).Int()
	return n == 1, err
}

// Renew extends the lease this process holds (see renewScript); false when
// another process holds it now.
func (l *Lease) Renew(ctx context.Context) (bool, error) {
	n, err := renewScript.Run(ctx, l.s.Client, []string{l.key}, l.token, l.s.ttl().Milliseconds()).Int()
	return n == 1, err
}

// Release gives the lease up, if this process holds it, so that another
// replica takes it at its next try instead of after TTL.
func (l *Lease) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = releaseScript.Run(ctx, l.s.Client, []string{l.key}, l.token).Err()
}

// ErrLost: the lease was taken by another process, or could not be renewed
// for TTL.
var ErrLost = errors.New("lease lost")

// Hold renews the lease every Every() until ctx ends (nil) or the lease is
// lost (ErrLost): another process holds it, or no renewal succeeded by its
// deadline — TTL − Every()/2 after the last renewal that did (sent), on
// the Shared's clock — when the holder must assume the lease expired and
// another took it. A renewal still running at the deadline is abandoned.
// It does not release the lease.
func (l *Lease) Hold(ctx context.Context) error {
	c := clock.Or(l.s.Clock)
	keep := l.s.ttl() - l.s.Every()/2
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var expired atomic.Bool
	deadline := c.AfterFunc(keep, func() { expired.Store(true); cancel() })
	defer deadline.Stop()
	t := c.NewTicker(l.s.Every())
	defer t.Stop()
	for {
		select {
		case <-hctx.Done():
		case <-t.C():
		}
		if expired.Load() {
			// Unrenewed for about TTL: it may have expired and been
			// taken; stop before two replicas work at once for long.
			return ErrLost
		}
		if ctx.Err() != nil {
			return nil
		}
		sent := c.Now()
		rctx, rcancel := context.WithTimeout(hctx, l.s.Every())
		ok, err := l.Renew(rctx)
		rcancel()
		switch {
		case expired.Load():
			return ErrLost
		case ctx.Err() != nil:
			return nil
		case err == nil && !ok:
			return ErrLost
		case err == nil:
			deadline.Reset(keep - c.Since(sent))
		}
	}
}

// Run does work while holding the lease, and waits while another process
// holds it, until ctx ends: work gets a context that ends when the lease
// is lost (and Run tries again every Every()) or when ctx ends. wait is
// called each time the lease is found held by another (or the audit Redis
// fails); it may read what the holder shares. Run does not release the
// lease: the caller does (Release) when it stops for good.
//
// When this replica cannot reach the audit Redis for TTL it cannot hold
// the lease: Run then does the work anyway, on its own, until the audit
// Redis answers again, and says so once (Warn) as it starts. The replicas
// that still reach the audit Redis keep their lease and work on meanwhile,
// so a replica cut off alone duplicates the holder's work (it fails open
// rather than stopping); with the audit Redis down for all, every replica
// works, as each would without replicas.
func (l *Lease) Run(ctx context.Context, work func(context.Context), wait func(context.Context)) {
	c := clock.Or(l.s.Clock)
	var failing time.Time // since when the audit Redis fails
	for ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, l.s.Every())
		ok, err := l.TryAcquire(actx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			failing = time.Time{}
		case failing.IsZero():
			failing = c.Now()
		case c.Since(failing) >= l.s.ttl():
			l.alone(ctx, work)
			failing = time.Time{}
			continue
		}
		if err != nil || !ok {
			wait(ctx)
			clock.Sleep(ctx, c, l.s.Every())
			continue
		}
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = l.Hold(wctx)
			stop()
		}()
		work(wctx)
		stop()
		<-done
	}
}

// alone does work until the audit Redis answers a PING again (or ctx ends).
// The first lease of the process worked alone says so (Warn), and the
// last says when the process shares again.
func (l *Lease) alone(ctx context.Context, work func(context.Context)) {
	c := clock.Or(l.s.Clock)
	if l.s.alone.Add(1) == 1 {
		l.s.log().Warn("the audit Redis cannot be reached: this replica does the shared background work on its own (others may do it too) until it answers", "lease", l.key)
	}
	defer func() {
		if l.s.alone.Add(-1) == 0 && ctx.Err() == nil {
			l.s.log().Info("the audit Redis answers again: this replica shares the background work again")
		}
	}()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stop()
		for clock.Sleep(wctx, c, l.s.Every()) {
			pctx, cancel := context.WithTimeout(wctx, l.s.Every())
			err := l.s.Client.Ping(pctx).Err()
			cancel()
			if err == nil {
				return
			}
		}
	}()
	work(wctx)
	stop()
	<-done
}
