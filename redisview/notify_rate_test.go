package redisview

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// waitChecked waits for the watcher's first read of the flags.
func waitChecked(t *testing.T, c *Conn) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, "the watcher's first read of notify-keyspace-events", func() bool {
		return !c.Keyspace().Checked.IsZero()
	})
}

// The measurement window: long enough for a once-a-second re-read to show
// twice, far below the 30 s an idle or refused connection waits.
const rateWindow = 2500 * time.Millisecond

// With notifications off and no one watching, a connection's watcher does
// not ask for notify-keyspace-events every second: at most once per 30 s.
func TestKeyspaceWatcherIdleWithoutViewers(t *testing.T) {
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.WatchKeyspace(ctx, func(int, string) {})
	waitChecked(t, c)
	s.Quiet(t, "config", rateWindow) // no one watching
}

// A CONFIG GET the server refuses (an ACL user without +config, managed
// Redis) is not retried every second, even while someone watches and the
// subscription it falls back to is refused too: at most once per 30 s.
func TestKeyspaceWatcherRefusedConfigBacksOff(t *testing.T) {
	s := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Client(0).Do(ctx, "ACL", "SETUSER", "noconf", "on", ">pw", "~*", "resetchannels", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, "redis://noconf:pw@"+s.Addr+"/0")
	defer c.WantKeyspace()()
	go c.WatchKeyspace(ctx, func(int, string) {})
	waitChecked(t, c)
	if ks := c.Keyspace(); !ks.Refused || !strings.Contains(ks.Why, "CONFIG GET is not permitted") {
		t.Fatalf("state %+v", ks)
	}
	s.Quiet(t, "config", rateWindow) // refused: not asked again for 30 s
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
