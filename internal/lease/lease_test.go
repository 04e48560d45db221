package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
	holder := func() string { v, _ := cl.Get(ctx, "keydeck:test:lease").Result(); return v }

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
	cl.Set(ctx, "keydeck:test:own", "a", time.Minute)
	a := (&lease.Shared{Client: cl, ID: "a"}).New("keydeck:test:own")
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
	if v := cl.Get(ctx, "keydeck:test:own").Val(); v != "a" {
		t.Fatalf("lease held by %q after b's try, want a", v)
	}
}
