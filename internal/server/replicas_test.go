package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// deployment is Keydeck replicas on one data server sharing one audit
// Redis (its own server, as --audit would name one).
type deployment struct {
	data, audit *redistest.Server
	replicas    []*server.Server
	urls        []string
}

func newDeployment(t *testing.T, n int) *deployment {
	t.Helper()
	d := &deployment{data: redistest.Start(t, "--notify-keyspace-events", "KA"), audit: redistest.Start(t)}
	ctx := context.Background()
	p := d.data.Client(0).Pipeline()
	for i := range 2000 {
		p.Set(ctx, fmt.Sprintf("user:%d:profile", i), "x", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for range n {
		s, err := server.Start(ctx, server.Config{
			Conns:       []redisview.ConnConfig{{Name: "main", URL: d.data.URL(0)}},
			PackFor:     map[string]string{"main": "eisland"},
			Auth:        handlers.Auth{Secret: []byte("0123456789abcdef0123456789abcdef")},
			AuditClient: d.audit.Client(0), Replicas: true,
			MetricsBans: true, // as cmd/web runs
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(hs.Close)
		d.replicas, d.urls = append(d.replicas, s), append(d.urls, hs.URL)
	}
	// Settled: every replica probed its connection, one holds its watch.
	redistest.Eventually(t, 20*time.Second, "every replica's first probe", func() bool {
		for _, s := range d.replicas {
			if s.Registry().All()[0].Status().Checked.IsZero() {
				return false
			}
		}
		n, _ := d.audit.Client(0).Exists(ctx, "keydeck:probe:main:"+d.replicas[0].Registry().All()[0].TargetID()).Result()
		return n == 1
	})
	return d
}

// calls is the data server's command counts now.
func (d *deployment) calls(t *testing.T) map[string]int64 {
	t.Helper()
	c, err := d.data.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func diff(c1, c0 map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range c1 {
		if n := v - c0[k]; n > 0 {
			out[k] = n
		}
	}
	return out
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// window is the interval measured: a replica not holding the watch
// probes once in it (followerProbe).
const window = 30 * time.Second

// measure counts the commands each deployment's data server runs over the
// same interval.
func measure(t *testing.T, ds ...*deployment) []map[string]int64 {
	t.Helper()
	c0 := make([]map[string]int64, len(ds))
	for i, d := range ds {
		c0[i] = d.calls(t)
	}
	time.Sleep(window) // the interval measured
	out := make([]map[string]int64, len(ds))
	for i, d := range ds {
		out[i] = diff(d.calls(t), c0[i])
	}
	return out
}

func compare(t *testing.T, what string, one, two map[string]int64) {
	t.Helper()
	var lines string
	for _, k := range slices.Sorted(maps.Keys(two)) {
		lines += fmt.Sprintf(" %s %d/%d", k, one[k], two[k])
	}
	r := float64(total(two)) / float64(total(one))
	t.Logf("%s, data server commands over %v: one replica %d, two %d (%.3f×):%s", what, window, total(one), total(two), r, lines)
	if r > 1.1 {
		t.Errorf("%s: two replicas cost the data server %d commands, one %d: more than 1.1×", what, total(two), total(one))
	}
}

// Two replicas sharing an audit Redis cost the data server no more than
// one (≤ 1.1×), idle and with the same database page opened on each: one
// probes the connection and follows its keyspace events, one sweeps the
// database; the other shows the sweep's figures. Measured side by side, a
// deployment of one replica and one of two over the same 30 s (window).
func TestTwoReplicasCostRedisAsOne(t *testing.T) {
	one, two := newDeployment(t, 1), newDeployment(t, 2)
	idle := measure(t, one, two)
	compare(t, "idle", idle[0], idle[1])

	var wg sync.WaitGroup
	for _, d := range []*deployment{one, two} {
		for _, u := range d.urls {
			wg.Go(func() {
				res, err := http.Get(u + "/c/main/db/0")
				if err != nil || res.StatusCode != http.StatusOK {
					t.Errorf("%s: %v %v", u, err, res)
					return
				}
				res.Body.Close()
			})
		}
	}
	wg.Wait()
	for _, d := range []*deployment{one, two} {
		for _, u := range d.urls {
			redistest.Eventually(t, 30*time.Second, u+"'s database page with a completed pass of 2,000 keys", func() bool {
				res, err := http.Get(u + "/api/v1/connections/main/db/0/stats")
				if err != nil {
					return false
				}
				defer res.Body.Close()
				var body struct {
					Sweep struct {
						CompletedAt *time.Time `json:"completed_at"`
					} `json:"sweep"`
				}
				return res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&body) == nil && body.Sweep.CompletedAt != nil
			})
		}
	}
	watched := measure(t, one, two)
	compare(t, "the database page open on every replica", watched[0], watched[1])
}
