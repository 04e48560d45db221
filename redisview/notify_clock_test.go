package redisview

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

// fakeClocked is c on a fake clock, set before any of its workers starts.
func fakeClocked(c *Conn) *clock.Fake {
	fake := clock.NewFake(time.Time{})
	c.clock = fake
	return fake
}

// waitArmed waits until the connection's watcher waits on its fake clock
// for exactly want (its next read of the flags, a back-off, a recheck).
func waitArmed(t *testing.T, fake *clock.Fake, what string, want ...time.Duration) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, what, func() bool {
		got := fake.Deadlines()
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	})
}

// The keyspace watcher runs on its connection's clock: with no one
// watching it re-reads notify-keyspace-events once the idle interval has
// passed on that clock, and a subscription's recheck (events turned off)
// falls due on it too. A fake clock drives every step.
func TestKeyspaceWatcherRunsOnTheConnectionsClock(t *testing.T) {
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	fake := fakeClocked(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.WatchKeyspace(ctx, func(int, string) {})
	waitChecked(t, c)
	if got := c.Keyspace().Checked; !got.Equal(fake.Now()) {
		t.Fatalf("flags read at %v, the connection's clock says %v", got, fake.Now())
	}
	waitArmed(t, fake, "the idle watcher waits KeyspaceIdleRecheck on the clock", KeyspaceIdleRecheck)
	if err := s.Client(0).ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
		t.Fatal(err)
	}
	n := s.CommandCount(t, "config")
	fake.Advance(KeyspaceIdleRecheck - time.Second)
	if got := s.CommandCount(t, "config"); got != n {
		t.Fatalf("%d CONFIG before the idle recheck fell due", got-n)
	}
	fake.Advance(time.Second)
	redistest.Eventually(t, 10*time.Second, "subscribed after the idle recheck", func() bool { return c.Keyspace().Subscribed })
	if got := c.Keyspace().Since; !got.Equal(fake.Now()) {
		t.Fatalf("subscribed since %v, the connection's clock says %v", got, fake.Now())
	}
	if err := s.Client(0).ConfigSet(ctx, "notify-keyspace-events", "").Err(); err != nil {
		t.Fatal(err)
	}
	waitArmed(t, fake, "the subscription pings and rechecks on the clock", subscribePing, time.Minute)
	fake.Advance(time.Minute)
	redistest.Eventually(t, 10*time.Second, "unsubscribed at the recheck a minute later", func() bool { return !c.Keyspace().Subscribed })
}
