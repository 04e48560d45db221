package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/search"
)

// topicFrames subscribes to a topic by its wire name and hands each frame
// to the returned channel until the test ends.
func topicFrames(t *testing.T, f *console, name string) <-chan string {
	t.Helper()
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + route.LiveURL(name)
	ws, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
	if err != nil {
		t.Fatalf("dial %s: %v (%+v)", name, err, res)
	}
	t.Cleanup(func() { ws.Close() })
	ch := make(chan string, 256)
	go func() {
		defer close(ch)
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			ch <- string(msg)
		}
	}()
	return ch
}

// A search over more keys than one request may scan reaches the end
// through the page's live topic, without a click: the first answer scans
// nothing and links the topic; the topic's frames say the progress and
// the last one lists every key once.
func TestSearchLiveScansToTheEnd(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	// One request: 5 SCAN calls of COUNT 20 per database, about 100 keys.
	defer handlers.SetSearchLimits(search.Limits{Calls: 5, Count: 20, Cap: 5000, Time: 5 * time.Second})()
	defer handlers.SetSearchLive(search.Limits{Calls: 5, Count: 20, Cap: 5000, Time: 5 * time.Second, Total: 1 << 40})()
	const n = 600
	p := f.redis.Client(7).Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := f.redis.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := get(t, f.srv.URL+route.SearchURL("main", "bulk:*"))
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	after, err := f.redis.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after["scan"] != before["scan"] {
		t.Errorf("the page's first answer ran %d SCANs; its topic runs them", after["scan"]-before["scan"])
	}
	d := doc(t, body)
	ws, _ := d.Find(`[data-testid="search-live"]`).Attr("ws-connect")
	topic := handlers.SearchTopic{Conn: "main", Q: "bulk:*"}.String()
	if ws != route.LiveURL(topic) {
		t.Fatalf("live region connects to %q, want %q", ws, route.LiveURL(topic))
	}
	if st, _ := d.Find(`[data-testid="search-live-state"]`).Attr("data-state"); st != "waiting" {
		t.Errorf("first answer's state %q", st)
	}

	frames := topicFrames(t, f, topic)
	progress := waitFrame(t, frames, "a frame in progress", `data-state="scanning"`, "db7, MATCH")
	if !strings.Contains(progress, "keys scanned") {
		t.Errorf("progress frame says no count: %.600s", progress)
	}
	last := waitFrame(t, frames, "the end", `data-state="end"`)
	fd, err := goquery.NewDocumentFromReader(strings.NewReader(last))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	fd.Find(`[data-testid="search-db-7"] a[data-testid="search-key"]`).Each(func(_ int, s *goquery.Selection) {
		seen[strings.TrimSpace(s.Text())]++
	})
	for i := range n {
		k := fmt.Sprintf("bulk:%05d", i)
		if seen[k] != 1 {
			t.Fatalf("%s listed %d times in the last frame (%d keys listed)", k, seen[k], len(seen))
		}
	}
	if len(seen) != n {
		t.Fatalf("%d keys listed, want %d", len(seen), n)
	}
	if s := fd.Find(`[data-testid="search-live-state"]`).Text(); !strings.Contains(s, "Done: every scan reached the end") || !strings.Contains(s, "600 keys found") {
		t.Errorf("end state %q", s)
	}
	if fd.Find(`[data-testid="search-continue"]`).Length() != 0 {
		t.Error("a continue link at the end")
	}

	// A second viewer of the same search gets the finished scan: no new SCAN.
	before, _ = f.redis.CommandCalls(ctx)
	waitFrame(t, topicFrames(t, f, topic), "second viewer", `data-state="end"`, "bulk:00599")
	after, _ = f.redis.CommandCalls(ctx)
	if after["scan"] != before["scan"] {
		t.Errorf("a second viewer ran %d SCANs", after["scan"]-before["scan"])
	}
}

// The live search stops at its cap and says so in words; at its budget
// it says how far it got and links a continuation.
func TestSearchLiveCapAndBudget(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	p := f.redis.Client(7).Pipeline()
	for i := range 300 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	restore := handlers.SetSearchLive(search.Limits{Calls: 2, Count: 20, Cap: 50, Time: 5 * time.Second, Total: 1 << 40})
	waitFrame(t, topicFrames(t, f, handlers.SearchTopic{Conn: "main", Q: "bulk:*"}.String()), "cap",
		`data-state="cap"`, "Stopped at the cap of 50 keys found")
	restore()
	defer handlers.SetSearchLive(search.Limits{Calls: 2, Count: 20, Cap: 5000, Time: 5 * time.Second, Total: 100})()
	last := waitFrame(t, topicFrames(t, f, handlers.SearchTopic{Conn: "main", Q: "bulk:0*"}.String()), "budget",
		`data-state="budget"`, "Stopped after scanning about 1", "keys, the budget of a live search", `data-testid="search-continue"`)
	if !strings.Contains(last, "cont=") {
		t.Errorf("budget frame's continue link: %.600s", last)
	}
}

// Written account=…, a search is derivation alone: the page links no
// live scan, and its topic, watched anyway, sends no SCAN.
func TestSearchLiveAccountNoScan(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	ctx := context.Background()
	acct := "Zoë:ops/β"
	key := "verify:slider:fail:account:" + demo.SliderKeyPart(acct)
	f.redis.Client(4).Set(ctx, key, "2", 10*time.Minute)
	before, err := f.redis.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := get(t, f.srv.URL+route.SearchURL("main", "account="+acct))
	if strings.Contains(body, "ws-connect") || !strings.Contains(body, `data-testid="search-hit"`) {
		t.Fatalf("account= page: live %v, hit %v", strings.Contains(body, "ws-connect"), strings.Contains(body, "search-hit"))
	}
	waitFrame(t, topicFrames(t, f, handlers.SearchTopic{Conn: "main", Q: "account=" + acct}.String()), "account topic",
		`data-state="end"`, "nothing to scan", "verify:slider:fail:account:")
	after, err := f.redis.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after["scan"] != before["scan"] || after["keys"] != before["keys"] {
		t.Fatalf("an account= search ran %d SCANs, %d KEYS", after["scan"]-before["scan"], after["keys"]-before["keys"])
	}
}

// A search topic's name carries the query byte-exact; one name per search.
func TestSearchTopicRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range []handlers.SearchTopic{{Conn: "main", Q: "bulk:*"}, {Conn: "main", Q: "a&b=c:\xff<i>"}} {
		got, err := handlers.ParseTopic(tt.String())
		if err != nil || got != tt {
			t.Errorf("%q parses to %#v, %v", tt.String(), got, err)
		}
	}
	for _, bad := range []string{"search:", "search:conn=main", "search:conn=main&q=+", "search:q=x&conn=main",
		"search:conn=Bad Name&q=x", "search:conn=main&q=" + strings.Repeat("a", search.MaxQuery+1)} {
		if _, err := handlers.ParseTopic(bad); err == nil {
			t.Errorf("%.60q parses", bad)
		}
	}
}

// Two people watching the same search share one scan: the SCAN calls two
// viewers cost together are those one viewer costs alone.
func TestSearchLiveTwoViewersOneScan(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	defer handlers.SetSearchLive(search.Limits{Calls: 3, Count: 20, Cap: 5000, Time: 5 * time.Second, Total: 1 << 40})()
	p := f.redis.Client(7).Pipeline()
	for i := range 400 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	scans := func() int64 {
		t.Helper()
		c, err := f.redis.CommandCalls(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c["scan"]
	}
	dial := func(q string) (*websocket.Conn, <-chan string) {
		t.Helper()
		u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + route.LiveURL(handlers.SearchTopic{Conn: "main", Q: q}.String())
		ws, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
		if err != nil {
			t.Fatalf("dial: %v (%+v)", err, res)
		}
		ch := make(chan string, 256)
		go func() {
			defer close(ch)
			for {
				_, msg, err := ws.ReadMessage()
				if err != nil {
					return
				}
				ch <- string(msg)
			}
		}()
		return ws, ch
	}
	// Two searches walking the same databases with the same SCAN calls
	// (only MATCH differs): one watched alone, one by two viewers at once.
	before := scans()
	a, fa := dial("bulk:*")
	defer a.Close()
	waitFrame(t, fa, "one viewer: the end", `data-state="end"`, "400 keys found")
	alone := scans() - before
	before = scans()
	b, fb := dial("bulk:?*")
	c, fc := dial("bulk:?*")
	defer b.Close()
	defer c.Close()
	waitFrame(t, fb, "viewer b: the end", `data-state="end"`, "400 keys found")
	waitFrame(t, fc, "viewer c: the end", `data-state="end"`, "400 keys found")
	both := scans() - before
	if alone < 10 || both != alone {
		t.Fatalf("one viewer cost %d SCAN calls, two viewers %d", alone, both)
	}
}
