package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/PuerkitoBio/goquery"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// gate is a TCP proxy to a Redis server that holds every connection
// until opened: a server that has answered nothing yet, without a sleep.
type gate struct {
	addr string
	open chan struct{}
	once sync.Once
}

func newGate(t *testing.T, upstream string) *gate {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{addr: l.Addr().String(), open: make(chan struct{})}
	t.Cleanup(func() { g.release(); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				<-g.open
				u, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c); u.Close() }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return g
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// Before the sweep has read anything, the Rate limits and Locks pages
// answer at once and say which families they are still reading (not "no
// rows"); the live topic then brings the rows as the sweep finds them.
func TestOpsPagesShowReadingThenRowsLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	seedLimits(t, rs)
	g := newGate(t, rs.Addr)
	f := startConsole(t, rs, server.Config{
		Conns:   []redisview.ConnConfig{{Name: "main", URL: "redis://" + g.addr + "/0"}},
		PackFor: map[string]string{"main": "eisland"},
	}, nil)

	for _, p := range []struct{ url, status, family string }{
		{route.LimitsURL("main"), "limits-status", "limit-family-"},
		{route.LocksURL("main"), "locks-status", "lock-family-"},
	} {
		code, _, body := get(t, f.srv.URL+p.url)
		if code != 200 {
			t.Fatalf("%s: %d", p.url, code)
		}
		if !strings.Contains(body, `data-testid="reading"`) || strings.Contains(body, "rows may be missing") ||
			strings.Contains(body, `data-testid="`+p.family) {
			t.Fatalf("%s before any read: no reading state, or families shown as read: %.4000s", p.url, body)
		}
	}
	_, _, body := get(t, f.srv.URL+route.LimitsURL("main"))
	reading := regexp.MustCompile(`data-testid="reading">([^<]*)<`).FindStringSubmatch(body)
	if reading == nil || !strings.HasPrefix(reading[1], "Reading ") || !strings.Contains(reading[1], "login-failures (db6)") ||
		!strings.Contains(reading[1], "slider-rate-create-account (db4)") {
		t.Fatalf("reading line %q", reading)
	}

	// The gate opens once the websocket shows the reading state; eve's
	// locked login then arrives in a frame, no reload.
	topic := handlers.OpsTopic{Kind: "limits", Conn: "main"}.String()
	first := true
	last := f.frames(t, topic, func(msg []byte) bool {
		if first {
			first = false
			if !strings.Contains(string(msg), `data-testid="reading"`) {
				t.Errorf("first frame has no reading state: %.2000s", msg)
			}
			g.release()
		}
		return !strings.Contains(string(msg), "auth:limit:login:failures:eve")
	})
	if !strings.Contains(string(last), "locked until") {
		t.Fatalf("eve's row arrived without its lock: %.3000s", last)
	}
}

// opsPage is what the paging test reads of a Locks page's HTML: the
// family's rows (their keys' links), its pager's links and the live
// topic.
type opsPageRead struct {
	WSURL      string
	Keys       []string
	Prev, Next string
}

func opsPage(t *testing.T, u string) opsPageRead {
	t.Helper()
	code, _, body := get(t, u)
	if code != 200 {
		t.Fatalf("%s: %d %.2000s", u, code, body)
	}
	d := doc(t, body)
	var p opsPageRead
	p.WSURL, _ = d.Find(`[data-testid="live"]`).Attr("ws-connect")
	d.Find(`[data-testid="lock-row"] [data-testid="lock-key"]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		p.Keys = append(p.Keys, href+" "+s.Text())
	})
	p.Prev, _ = d.Find(`[data-testid="page-prev"]`).Attr("href")
	p.Next, _ = d.Find(`[data-testid="page-next"]`).Attr("href")
	return p
}

// A long family shows one page of rows; its page links carry the family,
// database, offset and the filter byte-exact, and walk every kept row once.
func TestOpsPagesArePaged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	const (
		fam    = "lock-create-pro-month"
		filter = "Zo\xff&x=1#" // not UTF-8, and query syntax
	)
	// No TTL: every lock equally severe, so the order is the keys' and
	// stable from one load to the next.
	for i := range 60 {
		f.redis.Client(10).Set(ctx, fmt.Sprintf("payment:lock:create:pro-month:%s%02d", filter, i), "holder", 0)
	}
	base := f.srv.URL + route.LocksURL("main")
	// The JSON (list-locks) has every kept row, the pages ten at a time.
	waitFor(t, "the sweep keeps 50 of the 60 locks", func() bool {
		var vm struct {
			Families struct {
				Items []struct {
					ID   string
					Kept struct {
						State string
						Of    int64
					}
					Rows []json.RawMessage
				}
			}
		}
		code, _, body := get(t, base, "Accept", "application/json")
		if code != 200 || json.Unmarshal([]byte(body), &vm) != nil {
			t.Fatalf("%d %.300s", code, body)
		}
		for _, g := range vm.Families.Items {
			if g.ID == fam {
				return g.Kept.State == "cut" && g.Kept.Of == 60 && len(g.Rows) == 50
			}
		}
		return false
	})

	// The HTML page shows one page of rows, and a link to the next.
	_, _, body := get(t, base+"?q="+url.QueryEscape(filter))
	if n := strings.Count(body, `data-testid="lock-row"`); n != 10 {
		t.Fatalf("first page: %d rows, want 10", n)
	}
	if !strings.Contains(body, `data-testid="page-next"`) {
		t.Fatal("first page: no link to the next")
	}

	seen := map[string]bool{}
	u := base + "?q=" + url.QueryEscape(filter)
	for page := 1; ; page++ {
		vm := opsPage(t, u)
		rows := strings.Join(vm.Keys, " ")
		for _, k := range vm.Keys {
			if seen[k] {
				t.Fatalf("page %d repeats %s", page, k)
			}
			seen[k] = true
		}
		n, next, prev := len(vm.Keys), vm.Next, vm.Prev
		if n != 10 {
			t.Fatalf("page %d: %d rows: %s", page, n, rows)
		}
		if (page > 1) != (prev != "") {
			t.Fatalf("page %d: previous link %q", page, prev)
		}
		if page > 1 && !strings.Contains(vm.WSURL, url.QueryEscape("off="+fmt.Sprint((page-1)*10))) {
			t.Fatalf("page %d: the live topic does not stay on the page: %s", page, vm.WSURL)
		}
		if next == "" {
			if page != 5 {
				t.Fatalf("%d pages, want 5", page)
			}
			break
		}
		nu, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		q := nu.Query()
		if nu.Path != route.LocksURL("main") || q.Get("q") != filter || q.Get("fam") != fam || q.Get("db") != "10" ||
			q.Get("off") != fmt.Sprint(page*10) || nu.Fragment != "fam-"+fam+"-10" {
			t.Fatalf("page %d: next link %q", page, next)
		}
		u = f.srv.URL + next
	}
	if len(seen) != 50 {
		t.Fatalf("the pages walked %d of the 50 kept rows", len(seen))
	}
	// An offset past the rows shows the last page.
	vm := opsPage(t, base+"?fam="+fam+"&db=10&off=400")
	if len(vm.Keys) != 10 || vm.Next != "" || vm.Prev == "" {
		t.Fatalf("offset 400: %d rows, pager %q %q", len(vm.Keys), vm.Prev, vm.Next)
	}
}
