package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// ours lists the goroutines running Keydeck's code, other than this
// test's and the test redis-server's.
func ours() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		// A test waiting for its parallel turn is not background work.
		if strings.Contains(g, "testing.(*T).Parallel") {
			continue
		}
		if strings.Contains(g, "github.com/keydeck/keydeck/") && !strings.Contains(g, "server_test.") && !strings.Contains(g, "internal/redistest.") {
			out = append(out, g)
		}
	}
	return out
}

// Everything Start sets going — monitors and the pack detections they lead
// to, the hub's pollers, sweepers, the leaderboard index's scans, keyspace
// listeners, open websockets — has ended when Close returns.
func TestCloseAwaitsAllBackgroundWork(t *testing.T) {
	rs := redistest.Start(t, "--notify-keyspace-events", "Kz")
	// Keys of no pack: every poll of the overview asks for a detection.
	rs.Client(0).Set(context.Background(), "nobody:knows:this", "1", 0)
	if leaks := ours(); len(leaks) != 0 {
		t.Fatalf("goroutines before the test:\n%s", strings.Join(leaks, "\n\n"))
	}
	s, err := server.Start(context.Background(), server.Config{
		Conns:        []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}},
		Auth:         handlers.Auth{Secret: []byte("0123456789abcdef0123456789abcdef")},
		PollInterval: 100 * time.Millisecond, MonitorInterval: 50 * time.Millisecond,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, p := range []string{"/", "/c/main", "/c/main/db/0", "/leaderboards"} {
		res, err := http.Get(srv.URL + p)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", p, err, res)
		}
		res.Body.Close()
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+route.LiveURL(handlers.OverviewTopic{Conn: "main"}.String()), http.Header{"Origin": {srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, _, err := ws.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// The websocket's handler returns once the server's context ends and
	// the browser side is gone; httptest's own goroutines are not ours.
	ws.Close()
	redistest.Eventually(t, 5*time.Second, "no goroutine of ours after Close", func() bool { return len(ours()) == 0 })
	if leaks := ours(); len(leaks) != 0 {
		t.Fatalf("still running after Close:\n%s", strings.Join(leaks, "\n\n"))
	}
}

// A Redis Cluster cannot hold the audit stream: Start asks the server what
// it is before choosing the audit target and refuses it clearly (the
// check ran before detection, passed, and the audit client was closed
// once the monitor found the cluster: every action was refused).
func TestStartRefusesAClusterAsTheAuditRedis(t *testing.T) {
	cl := redistest.StartCluster(t)
	for _, audit := range []string{"c/0", ""} {
		s, err := server.Start(context.Background(), server.Config{
			Conns: []redisview.ConnConfig{{Name: "c", URL: "redis://" + cl.Nodes[0].Addr}},
			Auth:  handlers.Auth{Secret: []byte("0123456789abcdef0123456789abcdef")},
			Audit: audit,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			s.Close()
			t.Fatalf("--audit %q: a cluster was accepted as the audit Redis", audit)
		}
		if !strings.Contains(err.Error(), "Redis Cluster") {
			t.Fatalf("--audit %q: %v", audit, err)
		}
	}
}
