// Command bench-metrics measures /metrics on a large server: the series
// count (the exposition's labels are per connection, database, family or
// list — never per key or user — so it must not grow with the keys), the
// size and time of a scrape (it sends no Redis command: it reads what the
// sweeps hold; internal/metrics's tests check that with commandstats).
//
// It loads -keys eIsland-shaped keys (benchkit.EislandShapes: databases 4,
// 5, 6, 8 and 14) into a fresh redis-server, starts a console on it with
// /metrics's keeper holding every worker (as --metrics-keep does) at a
// sweep budget of -rate keys/s, waits until every database the pack names
// has completed a statistics sweep pass, then scrapes -scrapes times.
//
//	go run ./cmd/bench-metrics [-keys 1000000] [-rate 100000] [-scrapes 20]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

func main() {
	keys := flag.Int("keys", 1_000_000, "keys to load")
	rate := flag.Int("rate", 100_000, "statistics sweep budget, keys per second")
	scrapes := flag.Int("scrapes", 20, "scrapes to time once the sweeps are done")
	wait := flag.Duration("wait", 10*time.Minute, "longest wait for every sweep's first pass")
	flag.Parse()
	if err := bench(*keys, *rate, *scrapes, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "bench-metrics:", err)
		os.Exit(1)
	}
}

func bench(keys, rate, scrapes int, wait time.Duration) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "keydeck-bench-metrics")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir)
	if err != nil {
		return err
	}
	defer stop()
	t0 := time.Now()
	if err := benchkit.LoadEisland(ctx, addr, keys); err != nil {
		return err
	}
	fmt.Printf("loaded %d eIsland-shaped keys in %s\n", keys, time.Since(t0).Round(time.Millisecond))

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.Start(ctx, server.Config{
		Conns:   []redisview.ConnConfig{{Name: "bench", URL: "redis://" + addr}},
		PackFor: map[string]string{"bench": "eisland"},
		Sweep:   stats.SweepBudget{KeysPerSec: rate, Count: 1000},
		// As --metrics-keep: the keeper holds every worker /metrics reports on.
		MetricsBans: true, MetricsKeep: true, MetricsInterval: 2 * time.Second,
	}, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	h := srv.MetricsHandler()

	t1 := time.Now()
	var body []byte
	for {
		body = scrape(h)
		done, want := passes(body)
		if done == want {
			break
		}
		if time.Since(t1) > wait {
			return fmt.Errorf("after %s, %d of %d databases have completed a sweep pass", wait, done, want)
		}
		time.Sleep(time.Second) // a benchmark waits on the real sweep
	}
	fmt.Printf("every database swept once after %s\n", time.Since(t1).Round(time.Second))

	t2 := time.Now()
	for range scrapes {
		body = scrape(h)
	}
	report(body, time.Since(t2)/time.Duration(scrapes), scrapes)
	return nil
}

func scrape(h http.Handler) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.Bytes()
}

// passes counts the loaded databases whose keydeck_sweep_passes_total is
// at least one (a database's series appear once its sweeper has started).
func passes(body []byte) (done, want int) {
	swept := map[string]bool{}
	for _, s := range series(body) {
		if s.name != "keydeck_sweep_passes_total" {
			continue
		}
		if v, err := strconv.ParseFloat(s.value, 64); err == nil && v >= 1 {
			swept[s.labels] = true
		}
	}
	for _, shape := range benchkit.EislandShapes {
		want++
		if swept[fmt.Sprintf(`{conn="bench",db="%d"}`, shape.DB)] {
			done++
		}
	}
	return done, want
}

type sample struct{ name, labels, value string }

// series parses the text exposition's samples (comments left out).
func series(body []byte) []sample {
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		name, labels := line[:sp], ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		out = append(out, sample{name, labels, line[sp+1:]})
	}
	return out
}

func report(body []byte, per time.Duration, scrapes int) {
	all := series(body)
	byName := map[string]int{}
	for _, s := range all {
		byName[s.name]++
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if byName[a] != byName[b] {
			return byName[b] - byName[a]
		}
		return strings.Compare(a, b)
	})
	fmt.Printf("series: %d in %d metrics; a scrape is %d bytes and takes %s (mean of %d)\n",
		len(all), len(names), len(body), per.Round(time.Microsecond), scrapes)
	for _, n := range names {
		fmt.Printf("  %5d  %s\n", byName[n], n)
	}
}
