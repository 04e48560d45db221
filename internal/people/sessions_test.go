package people

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

// Two stores on one Redis behave as two replicas.
func TestSessionStoreAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	clk := clock.NewFake(time.Now())
	a, b := NewSessionStore(rs.Client(15), WithClock(clk)), NewSessionStore(rs.Client(15), WithClock(clk))
	now := clk.Now()
	issued := now.Add(-time.Minute)
	if r, err := b.Revoked(ctx, "ada", "n1", issued); r || err != nil {
		t.Fatalf("fresh session: %v %v", r, err)
	}
	if err := a.Revoke(ctx, "n1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The record lives as long as the session would have.
	if ttl := rs.Client(15).PTTL(ctx, "keydeck:session:revoked:n1").Val(); ttl < 59*time.Minute || ttl > time.Hour {
		t.Fatalf("revocation TTL %v, want the session's remaining hour", ttl)
	}
	if r, _ := a.Revoked(ctx, "ada", "n1", issued); !r {
		t.Fatal("revoked here, valid here")
	}
	if r, err := b.Revoked(ctx, "ada", "n1", issued); r || err != nil {
		t.Fatalf("b's cached answer, fresh for %v: %v %v", b.fresh, r, err)
	}
	clk.Advance(b.fresh) // b's cached answer ages out
	if r, err := b.Revoked(ctx, "ada", "n1", issued); !r || err != nil {
		t.Fatalf("revoked on a, on b: %v %v", r, err)
	}
	if r, _ := b.Revoked(ctx, "ada", "n2", issued); r {
		t.Fatal("another session of the user was ended")
	}

	// Sign out everywhere: sessions issued up to then are void, later ones not.
	if err := b.RevokeUser(ctx, "ada", now, 12*time.Hour); err != nil {
		t.Fatal(err)
	}
	clk.Advance(a.fresh)
	if r, _ := a.Revoked(ctx, "ada", "n3", issued); !r {
		t.Fatal("a session issued before the cutoff survives")
	}
	if r, _ := a.Revoked(ctx, "ada", "n4", now.Add(time.Second)); r {
		t.Fatal("a session issued after the cutoff is void")
	}
	if r, _ := a.Revoked(ctx, "bob", "n5", issued); r {
		t.Fatal("another user's session is void")
	}
	// A cutoff never moves back (a replica with a slow clock).
	if err := a.RevokeUser(ctx, "ada", now.Add(-time.Hour), 12*time.Hour); err != nil {
		t.Fatal(err)
	}
	if v := rs.Client(15).Get(ctx, "keydeck:session:user:ada").Val(); v != strconv.FormatInt(now.UnixMilli(), 10) {
		t.Fatalf("cutoff moved to %s", v)
	}
}

// Without Redis, writes fail (and record nothing), reads say so; what this
// replica ended before the outage stays ended.
func TestSessionStoreUnreachable(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	clk := clock.NewFake(time.Now())
	// No retries: each command to the stopped server fails at once, not
	// after go-redis's three back-offs (about a second each).
	c := redis.NewClient(&redis.Options{Addr: rs.Addr, DB: 15, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	s := NewSessionStore(c, WithClock(clk))
	now := clk.Now()
	if err := s.Revoke(ctx, "ended-before", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	rs.Stop()
	if err := s.Revoke(ctx, "n1", now.Add(time.Hour)); err == nil {
		t.Fatal("revocation reported stored with Redis down")
	}
	if err := s.RevokeUser(ctx, "ada", now, time.Hour); err == nil {
		t.Fatal("sign-out-everywhere reported stored with Redis down")
	}
	clk.Advance(s.fresh)
	if r, err := s.Revoked(ctx, "ada", "n1", now.Add(-time.Minute)); r || err == nil {
		t.Fatalf("unreadable store: %v %v, want not known revoked and an error", r, err)
	}
	if r, _ := s.Revoked(ctx, "ada", "ended-before", now.Add(-time.Minute)); !r {
		t.Fatal("a session this replica ended came back while Redis is down")
	}
}
