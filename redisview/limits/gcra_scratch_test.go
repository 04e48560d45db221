package limits_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

func TestScratchNewLimitRole(t *testing.T) {
	pack, err := schema.Load("g.yaml", []byte(`name: g
title: G
families:
  - id: api-gcra
    db: 0
    pattern: "gcra:{user}"
    type: string
    ttl: {max: 1h}
    domain: API
    role: gcra
    params: {limit: 10, period: 1m}
    description: scratch.
`))
	if err != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t)
	c, err := redisview.Open(redisview.ConnConfig{Name: "g", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ForcePack(pack)
	now := time.Now()
	rs.Client(0).Set(context.Background(), "gcra:zoe", strconv.FormatInt(now.Add(time.Minute).UnixMilli(), 10), time.Hour)
	pool := limits.NewPool(t.Context(), limits.Budget{KeysPerSec: 100000, Count: 100, Keep: 10, Refresh: 100 * time.Millisecond}, time.Second)
	s, release := pool.Acquire(c)
	defer release()
	s.WaitRead(context.Background(), 10*time.Second)
	got := limits.RankLimits(s.Snapshot(), "", time.Now())
	if len(got) != 1 || len(got[0].Shown) != 1 || got[0].Shown[0].State.Used < 9 || got[0].Shown[0].Row.Err != "" {
		t.Fatalf("%+v", got)
	}
	t.Logf("row %q state %+v", got[0].Shown[0].Row.Key, got[0].Shown[0].State)
}
