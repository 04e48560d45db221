package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// replicaConsole runs the real main loop with args; stop ends it (a clean
// stop: its leases are released).
func replicaConsole(t *testing.T, args ...string) (url string, stop func()) {
	t.Helper()
	cfg, err := parseFlags("keydeck", append([]string{"--addr", "127.0.0.1:0"}, args...), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), ready) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case addr := <-ready:
		return "http://" + addr, stop
	case err := <-errc:
		stopped = true
		t.Fatalf("run: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("console did not start")
	}
	return "", stop
}

type dbSweep struct {
	Total int64 `json:"total_keys"`
	Sweep struct {
		State       string     `json:"state"`
		CompletedAt *time.Time `json:"completed_at"`
	} `json:"sweep"`
	Unmatched struct {
		Keys int64 `json:"keys"`
	} `json:"unmatched"`
}

func getDBSweep(t *testing.T, base string) (dbSweep, bool) {
	t.Helper()
	res, err := http.Get(base + "/api/v1/connections/main/db/0/stats")
	if err != nil {
		return dbSweep{}, false
	}
	defer res.Body.Close()
	var d dbSweep
	return d, res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&d) == nil
}

// Two keydeck processes given the same --audit share a database's sweep:
// the second shows the first's pass (the same completion time) without
// sweeping, and when the first stops the second takes the lease and its
// figures follow the database again.
func TestTwoConsolesShareOneSweep(t *testing.T) {
	t.Parallel()
	data, audit := redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	p := data.Client(0).Pipeline()
	for i := range 1500 {
		p.Set(ctx, fmt.Sprintf("replica:test:%d", i), "v", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	args := []string{"--redis", "main=" + data.URL(0), "--redis", "audit=" + audit.URL(0), "--audit", "audit/0", "--metrics-keep=false"}
	a, stopA := replicaConsole(t, args...)
	var first dbSweep
	redistest.Eventually(t, 60*time.Second, "replica A's completed pass", func() bool {
		d, ok := getDBSweep(t, a)
		first = d
		return ok && d.Sweep.CompletedAt != nil
	})
	b, _ := replicaConsole(t, args...)
	redistest.Eventually(t, 20*time.Second, "replica B showing replica A's pass", func() bool {
		d, ok := getDBSweep(t, b)
		return ok && d.Sweep.CompletedAt != nil && d.Sweep.CompletedAt.Equal(*first.Sweep.CompletedAt)
	})
	lease := "keydeck:sweep:lease:0:main:" + redisview.TargetID(data.URL(0))
	holderA, err := audit.Client(0).Get(ctx, lease).Result()
	if err != nil {
		t.Fatalf("the sweep's lease: %v", err)
	}

	stopA()
	redistest.Eventually(t, 10*time.Second, "replica B holding the sweep's lease", func() bool {
		v, err := audit.Client(0).Get(ctx, lease).Result()
		return err == nil && v != holderA
	})
	data.Client(0).Set(ctx, "replica:test:new", "v", 0)
	redistest.Eventually(t, 30*time.Second, "replica B's own pass counting the new key", func() bool {
		d, ok := getDBSweep(t, b)
		return ok && d.Sweep.CompletedAt != nil && d.Sweep.CompletedAt.After(*first.Sweep.CompletedAt) && d.Unmatched.Keys == 1501
	})
}
