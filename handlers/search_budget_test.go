package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Issue 17.5: one viewer with 16 live searches on one socket kept Redis
// busy scanning, each search as fast as its topic could poll. Every scan
// a person starts on a connection now draws from one budget of keys/s (by
// default the sweep's rate), so their SCAN calls together stay within
// it, and a search waiting for its turn says so live.
func TestLiveSearchesShareOneScanBudget(t *testing.T) {
	rs := redistest.Start(t)
	const rate, count = 2000, 20 // keys/s (the sweep's, so the search budget's), SCAN COUNT
	f := startConsole(t, rs, server.Config{Sweep: stats.SweepBudget{KeysPerSec: rate, Count: 500}}, nil).up(t)
	defer handlers.SetSearchLive(search.Limits{Calls: 5, Count: count, Cap: 5000, Time: 5 * time.Second, Total: 1 << 40})()
	ctx := context.Background()
	p := rs.Client(7).Pipeline()
	for i := range 20000 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	q := url.Values{}
	for i := range handlers.WSMaxTopics {
		q.Add("topic", handlers.SearchTopic{Conn: "main", Q: fmt.Sprintf("bulk:*%x", i)}.String())
	}
	before, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ws, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.srv.URL, "http")+route.Live+"?"+q.Encode(), http.Header{"Origin": {f.srv.URL}})
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, res)
	}
	defer ws.Close()
	// Frames until 1.5 s have passed and one said it waits for budget
	// (or 5 s have).
	waiting := ""
	for time.Since(start) < 1500*time.Millisecond || waiting == "" && time.Since(start) < 5*time.Second {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(msg), `data-state="budget-wait"`) && waiting == "" {
			waiting = string(msg)
		}
	}
	after, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	scans := after["scan"] - before["scan"]
	// The rate over the time taken, the first burst (a quarter second's
	// budget) and a call of slack.
	limit := int64(took.Seconds()*rate/count) + rate/4/count + 1
	if scans > limit {
		t.Errorf("16 live searches on one socket ran %d SCAN calls of COUNT %d in %s: %.0f keys/s; the budget is %d keys/s (at most %d calls)",
			scans, count, took.Round(time.Millisecond), float64(scans*count)/took.Seconds(), rate, limit)
	}
	if !strings.Contains(waiting, "Waiting for scan budget") {
		t.Errorf("the waiting frame does not say so: %.800s", waiting)
	}
}

// The user page's scans draw from the same budget: with none left, the
// page says it waits for scan budget, and goes on at the next read.
func TestUserPageWaitsForScanBudget(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	// 1 key/s: the first SCAN call of COUNT 100 empties the bucket for 100 s.
	f := startConsole(t, rs, server.Config{SearchRate: 1}, nil).up(t)
	seedUser(t, f, "ann", time.Minute)
	ctx := context.Background()
	p := rs.Client(8).Pipeline()
	for i := range 2000 {
		p.Set(ctx, fmt.Sprintf("issue-feedback:submit:other%04d:10.0.0.1", i), 1, time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before, _ := rs.CommandCalls(ctx)
	code, _, body := get(t, f.srv.URL+route.UserURL("main", "ann"))
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	after, _ := rs.CommandCalls(ctx)
	// One call of the page's, and the odd one of the leaderboard index's
	// background scan (unbudgeted: not started by a person).
	if n := after["scan"] - before["scan"]; n > 3 {
		t.Errorf("a budget of 1 key/s let the user page run %d SCAN calls of COUNT 100 (without it: 24)", n)
	}
	if !strings.Contains(body, "Waiting for scan budget") {
		t.Errorf("the user page does not say it waits for scan budget:\n%.3000s", body)
	}
}
