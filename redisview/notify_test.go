package redisview

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

func TestParseKeyspaceChannel(t *testing.T) {
	tests := []struct {
		in   string
		db   int
		key  string
		okay bool
	}{
		{"__keyspace@3__:mg:score:leaderboard:2048", 3, "mg:score:leaderboard:2048", true},
		{"__keyspace@0__:a__:b", 0, "a__:b", true},
		{"__keyevent@0__:set", 0, "", false},
		{"__keyspace@x__:k", 0, "", false},
	}
	for _, tt := range tests {
		db, key, ok := parseKeyspaceChannel(tt.in)
		if ok != tt.okay || ok && (db != tt.db || key != tt.key) {
			t.Errorf("parse(%q) = %d %q %v", tt.in, db, key, ok)
		}
	}
}

func TestWatchKeyspace(t *testing.T) {
	s := redistest.Start(t, "--notify-keyspace-events", "KA")
	c := openConn(t, s.URL(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 16)
	go c.WatchKeyspace(ctx, func(db int, key string) {
		if db == 14 {
			got <- key
		}
	})
	deadline := time.After(5 * time.Second)
	for i := 0; ; i++ {
		// Writes before the subscription is up are not seen: keep writing
		// (a new score each time, or Redis has nothing to notify).
		s.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: float64(i), Member: "a"})
		select {
		case k := <-got:
			if k != "mg:score:leaderboard:2048" {
				t.Fatalf("key = %q", k)
			}
			return
		case <-deadline:
			t.Fatal("no keyspace event")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Keyspace notifications turned on at runtime (CONFIG SET
// notify-keyspace-events Kz) are used at the next re-read while someone
// watches, KeyspaceOffRecheck (1 s) of the connection's clock later, and
// the connection says whether it is subscribed: until then it is not.
func TestWatchKeyspaceTurnedOnAtRuntime(t *testing.T) {
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	fake := fakeClocked(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Someone watches (a live view of a key): re-read every second.
	defer c.WantKeyspace()()
	got := make(chan string, 16)
	go c.WatchKeyspace(ctx, func(db int, key string) {
		if db == 14 {
			select {
			case got <- key:
			default:
			}
		}
	})
	// The watcher has seen notifications off and waits a second.
	waitChecked(t, c)
	waitArmed(t, fake, "the watched connection re-reads every KeyspaceOffRecheck", KeyspaceOffRecheck)
	if ks := c.Keyspace(); ks.Subscribed {
		t.Fatalf("subscribed with notifications off: %+v", ks)
	}
	if err := s.Client(0).ConfigSet(ctx, "notify-keyspace-events", "Kz").Err(); err != nil {
		t.Fatal(err)
	}
	fake.Advance(KeyspaceOffRecheck)
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		// Writes before the subscription is up are not seen: keep writing.
		s.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: float64(i), Member: "a"})
		select {
		case <-got:
			if ks := c.Keyspace(); !ks.Subscribed || !ks.Since.Equal(fake.Now()) {
				t.Fatalf("an event arrived but the connection says %+v", ks)
			}
			return
		case <-deadline:
			t.Fatalf("no keyspace event after the re-read (state %+v)", c.Keyspace())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
