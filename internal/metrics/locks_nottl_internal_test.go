package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A lock without a TTL is held past its TTL (the worst case) whether or
// not its value could be read: of a sensitive family (never read) or of
// the wrong type (WRONGTYPE), keydeck_locks_over_ttl counts it. Read on a
// real redis-server, as the sweep reads it (decode.ReadRows).
func TestLockWithoutTTLIsOverTTLWhateverItsValue(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	c := rs.Client(10)
	fam := *schema.BuiltinPack("eisland").Family("order-op-lock")
	fam.Sensitive = true
	if err := c.Set(ctx, "payment:order:op-lock:T1", "holder", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "payment:order:op-lock:T2", "holder", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	open := *schema.BuiltinPack("eisland").Family("order-op-lock")
	if err := c.HSet(ctx, "payment:order:op-lock:T3", "f", "v").Err(); err != nil { // no TTL, not a string
		t.Fatal(err)
	}
	now := time.Now()
	items := []decode.Item{
		{Match: schema.Match{Family: &fam}, Key: "payment:order:op-lock:T1"},
		{Match: schema.Match{Family: &fam}, Key: "payment:order:op-lock:T2"},
		{Match: schema.Match{Family: &open}, Key: "payment:order:op-lock:T3"},
	}
	read, err := decode.ReadRows(ctx, c, 10, items, now)
	if err != nil {
		t.Fatal(err)
	}
	if read[2].Err == "" {
		t.Fatalf("the hash read as a lock: %+v", read[2])
	}
	row := func(i int) limits.Row {
		it := items[i]
		return limits.Row{DB: 10, Key: it.Key, Family: it.Match.Family, ReadAt: now, PTTL: read[i].PTTL, State: read[i].State, Err: read[i].Err}
	}
	for _, tc := range []struct {
		name string
		fam  *schema.Family
		rows []limits.Row
	}{
		{"sensitive", &fam, []limits.Row{row(0), row(1)}},
		{"wrong type", &open, []limits.Row{row(2)}},
	} {
		f := limits.FamilySnap{Family: tc.fam, DB: 10, Class: decode.ClassLock, Rows: tc.rows, Total: int64(len(tc.rows)), Passes: 1, Read: true}
		got := gaugeValue(t, func(e emitter) { collectLocks(e, "eisland", f, now.Add(time.Second)) }, "keydeck_locks_over_ttl")
		if got != 1 {
			t.Errorf("%s: keydeck_locks_over_ttl = %v, want 1 (the lock without a TTL)", tc.name, got)
		}
	}
}

func gaugeValue(t *testing.T, collect func(emitter), name string) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	collect(emitter{ch})
	close(ch)
	v, found := 0.0, false
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		if pb.Gauge != nil && containsName(m.Desc().String(), name) {
			v, found = pb.Gauge.GetValue(), true
		}
	}
	if !found {
		t.Fatalf("no %s series", name)
	}
	return v
}

func containsName(desc, name string) bool {
	return len(desc) > 0 && (strings.Contains(desc, `"`+name+`"`))
}
