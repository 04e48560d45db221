package redisview

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// configCalls is how many CONFIG commands the server has run or refused
// (INFO commandstats: calls plus rejected_calls, subcommands included).
func configCalls(t *testing.T, s *redistest.Server) int {
	t.Helper()
	txt, err := s.Client(0).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(txt, "\n") {
		// Redis 7 counts subcommands apart: cmdstat_config|get.
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "cmdstat_config" && !strings.HasPrefix(name, "cmdstat_config|") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "calls" || k == "rejected_calls" {
				x, _ := strconv.Atoi(v)
				n += x
			}
		}
	}
	return n
}

// waitChecked waits for the watcher's first read of the flags.
func waitChecked(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Keyspace().Checked.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("the watcher never read notify-keyspace-events")
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	n0 := configCalls(t, s)
	time.Sleep(rateWindow) // a window to count in, not a wait for a condition
	if d := configCalls(t, s) - n0; d > 0 {
		t.Fatalf("%d CONFIG commands in %v with no one watching", d, rateWindow)
	}
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
	n0 := configCalls(t, s)
	time.Sleep(rateWindow) // a window to count in, not a wait for a condition
	if d := configCalls(t, s) - n0; d > 0 {
		t.Fatalf("%d refused CONFIG commands in %v", d, rateWindow)
	}
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
	on := time.Now()
	for !c.Keyspace().Subscribed {
		if time.Since(on) > 2*time.Second {
			t.Fatalf("not subscribed 2 s after interest started: %+v", c.Keyspace())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
