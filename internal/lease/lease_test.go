package lease_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/lease"
	"github.com/keydeck/keydeck/internal/redistest"
)

// A lease is held by one process at a time: another cannot take, renew or
// release it; its holder renews and releases it; a lease whose key is
// gone (the audit Redis restarted empty) is taken back by its holder's
// renewal.
func TestLeaseHeldByOneProcess(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	cl := rs.Client(0)
	a := (&lease.Shared{Client: cl, ID: "a"}).New("keydeck:test:lease")
	b := (&lease.Shared{Client: cl, ID: "b"}).New("keydeck:test:lease")
	holder := func() string { v, _ := cl.Get(ctx, "keydeck:test:lease").Result(); return lease.HolderID(v) }

	if ok, err := a.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("a's first acquire: %v %v", ok, err)
	}
	if ok, err := b.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("b acquired a's lease: %v %v", ok, err)
	}
	if ok, err := b.Renew(ctx); ok || err != nil || holder() != "a" {
		t.Fatalf("b renewed a's lease: %v %v, held by %q", ok, err, holder())
	}
	b.Release()
	if holder() != "a" {
		t.Fatalf("b's release removed a's lease: held by %q", holder())
	}
	if ok, err := a.Renew(ctx); !ok || err != nil {
		t.Fatalf("a's renewal: %v %v", ok, err)
	}
	if ttl := cl.PTTL(ctx, "keydeck:test:lease").Val(); ttl <= 0 || ttl > lease.TTL {
		t.Fatalf("a's renewed lease expires in %v, want within %v", ttl, lease.TTL)
	}
	cl.Del(ctx, "keydeck:test:lease")
	if ok, err := a.Renew(ctx); !ok || err != nil || holder() != "a" {
		t.Fatalf("a's renewal of a lease gone: %v %v, held by %q", ok, err, holder())
	}
	a.Release()
	if ok, err := b.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("b's acquire after a released: %v %v", ok, err)
	}
}

// Hold ends with ErrLost once another process holds the lease, and when
// no renewal succeeds for about TTL (the audit Redis is down).
func TestHoldEndsWhenTheLeaseIsLost(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	cl := rs.Client(0)
	sh := &lease.Shared{Client: cl, ID: "a", TTL: 600 * time.Millisecond, Renew: 100 * time.Millisecond}
	l := sh.New("keydeck:test:hold")
	if ok, err := l.TryAcquire(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- l.Hold(ctx) }()
	cl.Set(ctx, "keydeck:test:hold", "b", time.Minute)
	select {
	case err := <-errc:
		if !errors.Is(err, lease.ErrLost) {
			t.Fatalf("Hold: %v, want ErrLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Hold kept a lease another process holds")
	}

	cl.Del(ctx, "keydeck:test:hold")
	if ok, err := l.TryAcquire(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	go func() { errc <- l.Hold(ctx) }()
	rs.Stop()
	select {
	case err := <-errc:
		if !errors.Is(err, lease.ErrLost) {
			t.Fatalf("Hold: %v, want ErrLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Hold went on without a renewal for longer than TTL")
	}
}

// A lease key that already holds the caller's own ID (its renewal timed
// out client-side but ran, or the audit Redis was restored with it) is
// the caller's: TryAcquire takes it and sets its TTL, while another
// process's lease is still refused.
func TestTryAcquireTakesItsOwnLease(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	cl := rs.Client(0)
	a := (&lease.Shared{Client: cl, ID: "a"}).New("keydeck:test:own")
	cl.Set(ctx, "keydeck:test:own", a.Token(), time.Minute)
	if ok, err := a.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("a's acquire of a lease holding its own ID: %v %v", ok, err)
	}
	if ttl := cl.PTTL(ctx, "keydeck:test:own").Val(); ttl <= 0 || ttl > lease.TTL {
		t.Fatalf("a's acquired lease expires in %v, want within %v", ttl, lease.TTL)
	}
	b := (&lease.Shared{Client: cl, ID: "b"}).New("keydeck:test:own")
	if ok, err := b.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("b acquired a's lease: %v %v", ok, err)
	}
	if v := cl.Get(ctx, "keydeck:test:own").Val(); v != a.Token() {
		t.Fatalf("lease held by %q after b's try, want a", v)
	}
}

// failing makes the client's commands fail at once while *down (the audit
// Redis unreachable from this replica alone), counting those it fails.
type failing struct {
	down  *atomic.Bool
	count *atomic.Int64
}

func (failing) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f failing) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f.down.Load() {
			f.count.Add(1)
			return errors.New("audit Redis unreachable")
		}
		return next(ctx, cmd)
	}
}
func (f failing) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A holder whose renewals fail stops at its last renewal + TTL − Every/2
// (5 s with the defaults), not at the first renewal tick after it (6 s).
func TestHoldStopsAtItsDeadline(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	cl := rs.Client(0)
	var down atomic.Bool
	var tries atomic.Int64
	cl.AddHook(failing{&down, &tries})
	fk := clock.NewFake(time.Time{})
	l := (&lease.Shared{Client: cl, ID: "a", Clock: fk}).New("keydeck:test:deadline")
	if ok, err := l.TryAcquire(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- l.Hold(ctx) }()
	redistest.Eventually(t, 10*time.Second, "Hold waiting on the clock", func() bool { return fk.Waiters() >= 1 })
	down.Store(true)
	fk.Advance(2 * time.Second)
	redistest.Eventually(t, 10*time.Second, "the first failed renewal", func() bool { return tries.Load() >= 1 })
	fk.Advance(2 * time.Second)
	redistest.Eventually(t, 10*time.Second, "the second failed renewal", func() bool { return tries.Load() >= 2 })
	fk.Advance(999 * time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("Hold ended at 4.999 s, before its deadline: %v", err)
	default:
	}
	fk.Advance(time.Millisecond)
	select {
	case err := <-errc:
		if !errors.Is(err, lease.ErrLost) {
			t.Fatalf("Hold: %v, want ErrLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Hold still holding 5 s after its last renewal (TTL 6 s, renewed every 2 s)")
	}
}

// A replica that alone cannot reach the audit Redis works on its own, and
// says so once (Warn) however long it stays cut off.
func TestRunWarnsOnceWhenItWorksAlone(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	cl := rs.Client(0)
	var down atomic.Bool
	var tries atomic.Int64
	cl.AddHook(failing{&down, &tries})
	down.Store(true)
	var logged syncBuffer
	sh := &lease.Shared{Client: cl, ID: "a", TTL: 300 * time.Millisecond, Renew: 50 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&logged, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var works atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		sh.New("keydeck:test:alone").Run(ctx, func(ctx context.Context) { works.Add(1); <-ctx.Done() }, func(context.Context) {})
	}()
	redistest.Eventually(t, 10*time.Second, "work done alone", func() bool { return works.Load() >= 1 })
	n0 := tries.Load()
	redistest.Eventually(t, 10*time.Second, "more failed pings", func() bool { return tries.Load() >= n0+5 })
	cancel()
	<-done
	if n := strings.Count(logged.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings while working alone, want 1:\n%s", n, logged.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A work restarted in one process (a sweeper stopped and started again
// while its lease is still held) takes a lease of its own: the old one's
// late Release never deletes its successor's.
func TestReleaseLeavesTheSuccessorsLease(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	cl := rs.Client(0)
	sh := &lease.Shared{Client: cl, ID: "p"}
	old := sh.New("keydeck:test:restart")
	if ok, err := old.TryAcquire(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	successor := sh.New("keydeck:test:restart")
	if ok, err := successor.TryAcquire(ctx); err != nil {
		t.Fatal(err)
	} else if !ok {
		old.Release()
		if ok, err := successor.TryAcquire(ctx); !ok || err != nil {
			t.Fatalf("the successor's acquire after the old one released: %v %v", ok, err)
		}
	}
	old.Release() // late: the old sweeper's stop
	if n := cl.Exists(ctx, "keydeck:test:restart").Val(); n != 1 {
		t.Fatal("the old worker's release deleted its successor's lease")
	}
	if ok, err := successor.Renew(ctx); !ok || err != nil {
		t.Fatalf("the successor's renewal: %v %v", ok, err)
	}
	if id := lease.HolderID(cl.Get(ctx, "keydeck:test:restart").Val()); id != "p" {
		t.Fatalf("lease held by process %q, want p", id)
	}
}
