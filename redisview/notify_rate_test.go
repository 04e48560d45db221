package redisview

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

// waitChecked waits for the watcher's first read of the flags.
func waitChecked(t *testing.T, c *Conn) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, "the watcher's first read of notify-keyspace-events", func() bool {
		return !c.Keyspace().Checked.IsZero()
	})
}

// stepClock moves the fake clock on by d a second at a time, waiting after
// each second until the watcher waits on the clock again (its next
// timer armed), so every timer falls due at its own time.
func stepClock(t *testing.T, fake *clock.Fake, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ; d > 0; d -= time.Second {
		fake.Advance(min(d, time.Second))
		if err := fake.BlockUntil(ctx, 1); err != nil {
			t.Fatalf("the watcher stopped waiting on its clock: %v", err)
		}
	}
}

// With notifications off and no one watching, a connection's watcher does
// not ask for notify-keyspace-events every second: once per
// KeyspaceIdleRecheck (30 s) of its clock.
func TestKeyspaceWatcherIdleWithoutViewers(t *testing.T) {
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	fake := fakeClocked(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.WatchKeyspace(ctx, func(int, string) {})
	waitChecked(t, c)
	waitArmed(t, fake, "the idle watcher waits KeyspaceIdleRecheck", KeyspaceIdleRecheck)
	n := s.CommandCount(t, "config")
	stepClock(t, fake, KeyspaceIdleRecheck-time.Second) // no one watching
	if got := s.CommandCount(t, "config"); got != n {
		t.Fatalf("%d CONFIG before the idle recheck fell due", got-n)
	}
	fake.Advance(time.Second)
	redistest.Eventually(t, 10*time.Second, "one CONFIG GET at the idle recheck", func() bool { return s.CommandCount(t, "config") == n+1 })
}

// A CONFIG GET the server refuses (an ACL user without +config, managed
// Redis) is not retried every second, even while someone watches and the
// subscription it falls back to is refused too: once per
// KeyspaceIdleRecheck of the connection's clock.
func TestKeyspaceWatcherRefusedConfigBacksOff(t *testing.T) {
	s := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Client(0).Do(ctx, "ACL", "SETUSER", "noconf", "on", ">pw", "~*", "resetchannels", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, "redis://noconf:pw@"+s.Addr+"/0")
	fake := fakeClocked(c)
	defer c.WantKeyspace()()
	go c.WatchKeyspace(ctx, func(int, string) {})
	waitChecked(t, c)
	if ks := c.Keyspace(); !ks.Refused || !strings.Contains(ks.Why, "CONFIG GET is not permitted") {
		t.Fatalf("state %+v", ks)
	}
	if err := fake.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	n := s.CommandCount(t, "config")
	// The refused subscription backs off 1, 2, 4, 8, 16 s: its attempt at
	// 31 s is the first to find the refusal 30 s old.
	stepClock(t, fake, KeyspaceIdleRecheck)
	if got := s.CommandCount(t, "config"); got != n {
		t.Fatalf("%d CONFIG within %v of a refusal", got-n, KeyspaceIdleRecheck)
	}
	fake.Advance(time.Second)
	redistest.Eventually(t, 10*time.Second, "CONFIG GET asked again once the refusal is 30 s old", func() bool { return s.CommandCount(t, "config") == n+1 })
}

// Interest wakes an idle watcher at once: notifications turned on while
// no one watched are used within 2 s of someone starting to watch, not at
// the idle re-read 30 s later.
func TestKeyspaceInterestWakesIdleWatcher(t *testing.T) {
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.WatchKeyspace(ctx, func(int, string) {})
	waitChecked(t, c)
	if err := s.Client(0).ConfigSet(ctx, "notify-keyspace-events", "Kz").Err(); err != nil {
		t.Fatal(err)
	}
	release := c.WantKeyspace()
	defer release()
	redistest.Eventually(t, 2*time.Second, "subscribed after interest started", func() bool { return c.Keyspace().Subscribed })
}
