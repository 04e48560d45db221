package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"time"

	"github.com/keydeck/keydeck/handlers/route"
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
	l.total, l.bytes = time.Since(t0), len(b)
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
			l, err := getPage("http://" + addr + p.path)
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
		fmt.Printf("%-16s cold: %s\n%-16s warm: %s\n", p.name, summary(cold), "", summary(warm))
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

func kb(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1000) }
