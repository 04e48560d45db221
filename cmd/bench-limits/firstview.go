package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"slices"
	"time"

	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/internal/route"
)

// firstView measures the pages a person opens: how soon the first byte
// comes, how soon the whole page, and how big it is.
type firstView struct {
	on        bool
	runs      int
	warmAfter time.Duration
}

// pageLoad is one GET of a page.
type pageLoad struct {
	ttfb, total time.Duration
	bytes       int
	body        []byte
	// Cold loads: from the request until the page's live topic brought a
	// first row, and until it named no family as still unread.
	firstRow, allRead time.Duration
}

func getPage(u string) (pageLoad, error) {
	var l pageLoad
	t0 := time.Now()
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { l.ttfb = time.Since(t0) }}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return l, err
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	// A fresh connection per load, as a browser's first view.
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return l, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return l, err
	}
	l.total, l.bytes, l.body = time.Since(t0), len(b), b
	if res.StatusCode != http.StatusOK {
		return l, fmt.Errorf("GET %s: %d", u, res.StatusCode)
	}
	return l, nil
}

func (fv firstView) measure(start func() (string, func(), error)) error {
	pages := []struct{ name, path string }{
		{"Rate limits", route.LimitsURL("bench")},
		{"Locks", route.LocksURL("bench")},
		// A filter every key of the bench matches: every kept row qualifies.
		{"Rate limits ?q=0", route.LimitsURL("bench") + "?q=0"},
		{"Locks ?q=0", route.LocksURL("bench") + "?q=0"},
	}
	fmt.Printf("\nFirst view over HTTP (%d loads each; cold: a freshly started keydeck per load, warm: the sweep running for %s)\n", fv.runs, fv.warmAfter)
	for _, p := range pages {
		var cold, warm []pageLoad
		for range fv.runs {
			addr, stop, err := start()
			if err != nil {
				return err
			}
			t0 := time.Now()
			l, err := getPage("http://" + addr + p.path)
			if err == nil {
				err = l.live(addr, t0)
			}
			if err != nil {
				stop()
				return err
			}
			cold = append(cold, l)
			if len(warm) == 0 {
				time.Sleep(fv.warmAfter) // the sweep runs on, as for a second viewer
				for range fv.runs {
					l, err := getPage("http://" + addr + p.path)
					if err != nil {
						stop()
						return err
					}
					warm = append(warm, l)
				}
			}
			stop()
		}
		fmt.Printf("%-16s cold: %s\n%-16s       %s\n%-16s warm: %s\n", p.name, summary(cold), "", liveSummary(cold), "", summary(warm))
	}
	fmt.Println()
	return nil
}

// summary gives the median and the range of the loads.
func summary(ls []pageLoad) string {
	pick := func(f func(pageLoad) time.Duration) (med, lo, hi time.Duration) {
		var v []time.Duration
		for _, l := range ls {
			v = append(v, f(l))
		}
		slices.Sort(v)
		return v[len(v)/2], v[0], v[len(v)-1]
	}
	tm, tl, th := pick(func(l pageLoad) time.Duration { return l.ttfb })
	fm, fl, fh := pick(func(l pageLoad) time.Duration { return l.total })
	var sizes []int
	for _, l := range ls {
		sizes = append(sizes, l.bytes)
	}
	slices.Sort(sizes)
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	return fmt.Sprintf("first byte %s (%s–%s), whole page %s (%s–%s), %s (%s–%s)",
		r(tm), r(tl), r(th), r(fm), r(fl), r(fh), kb(sizes[len(sizes)/2]), kb(sizes[0]), kb(sizes[len(sizes)-1]))
}

var wsConnect = regexp.MustCompile(`ws-connect="([^"]+)"`)

// live follows the page's own live topic until it names no family as
// still unread (the marker data-testid="reading" is gone).
func (l *pageLoad) live(addr string, t0 time.Time) error {
	m := wsConnect.FindSubmatch(l.body)
	if m == nil {
		return fmt.Errorf("no live topic in the page")
	}
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+html.UnescapeString(string(m[1])), http.Header{"Origin": {"http://" + addr}})
	if err != nil {
		return err
	}
	defer c.Close()
	for {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		_, msg, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("live topic: %w", err)
		}
		if l.firstRow == 0 && (bytes.Contains(msg, []byte(`data-testid="limit-row"`)) || bytes.Contains(msg, []byte(`data-testid="lock-row"`))) {
			l.firstRow = time.Since(t0)
		}
		if !bytes.Contains(msg, []byte(`data-testid="reading"`)) {
			l.allRead = time.Since(t0)
			return nil
		}
	}
}

func liveSummary(ls []pageLoad) string {
	var rows, all []time.Duration
	for _, l := range ls {
		if l.firstRow > 0 {
			rows = append(rows, l.firstRow)
		}
		all = append(all, l.allRead)
	}
	med := func(v []time.Duration) string {
		if len(v) == 0 {
			return "none"
		}
		slices.Sort(v)
		return fmt.Sprintf("%s (%s–%s)", v[len(v)/2].Round(time.Millisecond), v[0].Round(time.Millisecond), v[len(v)-1].Round(time.Millisecond))
	}
	return "live: first row " + med(rows) + ", every family reached " + med(all) + " after the request"
}

func kb(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1000) }
