package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/lease"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// With replicas, the one holding a connection's watch follows its keyspace
// notifications as a console on its own does; another subscribes only
// while one of its own pages watches a key of it.
func TestReplicaSubscribesWhileItsPagesWatchAKey(t *testing.T) {
	data, audit := redistest.Start(t, "--notify-keyspace-events", "KA"), redistest.Start(t)
	start := func() *Server {
		s, err := Start(context.Background(), Config{
			Conns:       []redisview.ConnConfig{{Name: "main", URL: data.URL(0)}},
			PackFor:     map[string]string{"main": "eisland"},
			Auth:        handlers.Auth{Secret: []byte("0123456789abcdef0123456789abcdef")},
			AuditClient: audit.Client(0), Replicas: true,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a, b := start(), start()
	var holder, other *Server
	redistest.Eventually(t, 20*time.Second, "a holder of the connection's watch", func() bool {
		v, _ := audit.Client(0).Get(context.Background(), probeKey(a.reg.All()[0])).Result()
		id := lease.HolderID(v)
		switch id {
		case a.share.ID:
			holder, other = a, b
		case b.share.ID:
			holder, other = b, a
		}
		return holder != nil
	})
	sub := func(s *Server) bool { return s.reg.All()[0].Keyspace().Subscribed }
	redistest.Eventually(t, 20*time.Second, "the holder subscribed", func() bool { return sub(holder) })
	redistest.Eventually(t, 20*time.Second, "the other replica's notification flags read", func() bool {
		return other.reg.All()[0].Keyspace().Flags != ""
	})
	if sub(other) {
		t.Fatal("the replica not holding the watch subscribed with no key watched")
	}
	other.watch.Add("main", 0, "user:1:profile", "topic")
	redistest.Eventually(t, 20*time.Second, "the other replica subscribed while its page watches a key", func() bool { return sub(other) })
	other.watch.Remove("main", 0, "user:1:profile", "topic")
	redistest.Eventually(t, 20*time.Second, "the other replica unsubscribed once nothing is watched", func() bool { return !sub(other) })
	if !sub(holder) {
		t.Fatal("the holder's subscription ended")
	}
}

// Two consoles logging to one audit Redis whose connections share a name
// but not a server (staging and prod) share neither a connection's watch
// lease nor the metrics keeper's; the same connections do; the keys
// never carry a password.
func TestReplicaLeasesKeepToTheirOwnServers(t *testing.T) {
	t.Parallel()
	open := func(url string) *redisview.Conn {
		c, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: url}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	staging := open("redis://:s3cret@staging.example:6379/0")
	staging2 := open("redis://:other@staging.example:6379/0")
	prod := open("redis://:s3cret@prod.example:6379/0")
	if probeKey(staging) == probeKey(prod) {
		t.Fatalf("staging's and prod's watches share the lease %q", probeKey(staging))
	}
	if probeKey(staging) != probeKey(staging2) {
		t.Fatalf("one server's watch under two leases: %q, %q", probeKey(staging), probeKey(staging2))
	}
	if metricsKey([]*redisview.Conn{staging}) == metricsKey([]*redisview.Conn{prod}) {
		t.Fatalf("staging's and prod's metrics keepers share the lease %q", metricsKey([]*redisview.Conn{staging}))
	}
	if metricsKey([]*redisview.Conn{staging}) != metricsKey([]*redisview.Conn{staging2}) {
		t.Fatal("one console's metrics keeper under two leases")
	}
	for _, k := range []string{probeKey(staging), metricsKey([]*redisview.Conn{staging})} {
		if strings.Contains(k, "s3cret") {
			t.Fatalf("lease key %q carries the password", k)
		}
	}
}
