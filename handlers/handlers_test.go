package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, what, cond)
}

func get(t *testing.T, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, textOf(b)
}

// textOf is a page or frame as the tests look into it: names carry <wbr>
// between their parts (views.WrapName), which is not text.
func textOf(b []byte) string { return strings.ReplaceAll(string(b), "<wbr>", "") }

func TestRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.redis.Client(3).Set(context.Background(), "hello", "world", 0)
	tests := []struct {
		path     string
		status   int
		contains []string
	}{
		{"/", http.StatusOK, []string{`data-testid="connections"`, "main", "connected", `data-testid="demo-banner"`}},
		{"/c/main", http.StatusOK, []string{`id="overview-live"`, `ws-connect="/ws?topic=overview%3Amain"`, `data-testid="db-3"`, "Demo mode"}},
		{"/c/nope", http.StatusNotFound, []string{"No such connection"}},
		{"/nowhere", http.StatusNotFound, []string{"Page not found", `data-testid="error-page"`}},
		{"/c/main/db/3", http.StatusOK, []string{`id="db-live"`, `ws-connect="/ws?topic=dbstats%3Amain%3A3"`, "Schema pack: eisland"}},
		{"/c/main/db/x", http.StatusNotFound, []string{"not a database index"}},
		{"/c/main/db/-1", http.StatusNotFound, nil},
		{"/c/main/db/007", http.StatusNotFound, nil},
		{"/c/nope/db/1", http.StatusNotFound, []string{"No such connection"}},
		{"/ws?topic=dbstats:main:x", http.StatusNotFound, nil},
		{"/healthz", http.StatusOK, []string{"ok"}},
		{"/readyz", http.StatusOK, []string{"ready"}},
		{"/static/css/app.css", http.StatusOK, nil},
		{"/static/vendor/htmx.min.js", http.StatusOK, nil},
		{"/static/nope.js", http.StatusNotFound, nil},
		{"/ws", http.StatusBadRequest, nil},
		{"/ws?topic=overview:nope", http.StatusNotFound, nil},
		{"/ws?topic=bogus", http.StatusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, hdr, body := get(t, f.srv.URL+tt.path)
			if code != tt.status {
				t.Fatalf("status = %d, want %d; body: %.300s", code, tt.status, body)
			}
			for _, s := range tt.contains {
				if !strings.Contains(body, s) {
					t.Errorf("body lacks %q", s)
				}
			}
			if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("CSP = %q", csp)
			}
			if hdr.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("nosniff missing")
			}
		})
	}
}

func TestReadyzReportsDownConnection(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	code, _, body := get(t, f.srv.URL+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "main: unreachable since") {
		t.Fatalf("readyz = %d %q", code, body)
	}
	code, _, body = get(t, f.srv.URL+"/c/main")
	if code != http.StatusOK || !strings.Contains(body, "disconnected since") {
		t.Fatalf("overview while down = %d, lacks 'disconnected since'", code)
	}
	f.redis.Restart()
	waitFor(t, "monitor sees redis back", func() bool { return f.reg.All()[0].Status().Up })
	if code, _, _ := get(t, f.srv.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("readyz after restart = %d", code)
	}
}

func wsDial(t *testing.T, f *console, origin string) (*websocket.Conn, *http.Response, error) {
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws?topic=overview%3Amain"
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return websocket.DefaultDialer.Dial(u, h)
}

func TestWebsocketRefusesForeignOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	_, res, err := wsDial(t, f, "http://evil.example")
	if err == nil {
		t.Fatal("cross-origin websocket accepted")
	}
	if res == nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("response = %+v", res)
	}
}

func TestWebsocketPushesChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ws, res, err := wsDial(t, f, f.srv.URL)
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, res)
	}
	defer ws.Close()
	read := func() string {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return string(msg)
	}
	first := read()
	if !strings.Contains(first, `id="overview-live"`) || !strings.Contains(first, `hx-swap-oob="true"`) {
		t.Fatalf("first message is not an OOB overview fragment: %.200s", first)
	}
	f.redis.Client(7).Set(context.Background(), "fresh", "1", 0)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(read(), `data-testid="db-7"`) {
			return
		}
	}
	t.Fatal("no fragment with db7 after writing to it")
}

// With keyspace notifications on, a write to a watched leaderboard reaches
// the viewer long before the (here: one minute) poll interval.
func TestKeyspaceNotificationKicksLeaderboard(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t, "--notify-keyspace-events", "Kz")
	srv := startConsole(t, rs, server.Config{PollInterval: time.Minute, MinGap: 50 * time.Millisecond}, nil).up(t).srv
	ctx := context.Background()
	const board = "mg:score:leaderboard:2048"
	db := rs.Client(14)
	db.ZAdd(ctx, board, redis.Z{Score: 10, Member: "old"})
	topic := handlers.LeaderboardTopic{Window: route.Window{Conn: "main", DB: 14, Key: board, N: route.DefaultRows}}.String()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws?topic="+url.QueryEscape(topic), http.Header{"Origin": {srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, msg, err := ws.ReadMessage(); err != nil || !strings.Contains(string(msg), ">old<") {
		t.Fatalf("first frame: %v %.200s", err, msg)
	}
	// The subscription may not be up yet: write until a frame shows a newcomer.
	deadline := time.Now().Add(5 * time.Second)
	got := make(chan string, 1)
	go func() {
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if strings.Contains(string(msg), ">newcomer") {
				got <- string(msg)
				return
			}
		}
	}()
	for i := 0; time.Now().Before(deadline); i++ {
		db.ZAdd(ctx, board, redis.Z{Score: float64(100 + i), Member: "newcomer" + strconv.Itoa(i)})
		select {
		case <-got:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatal("no frame within 5 s although the poll interval is a minute")
}
