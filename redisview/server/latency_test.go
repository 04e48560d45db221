package server_test

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
)

func TestLatencyEvent(t *testing.T) {
	s := redistest.Start(t, "--enable-debug-command", "yes")
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	app := s.Client(0)
	defer app.Close()

	off := server.ReadLatency(ctx, redisview.ServerFor(conn.Client()))
	if off.Err != "" || !off.Threshold.OK || off.Threshold.V != 0 || len(off.Events) != 0 {
		t.Fatalf("before: %+v, want the monitor off and no event", off)
	}
	app.ConfigSet(ctx, "latency-monitor-threshold", "10")
	if err := app.Do(ctx, "debug", "sleep", "0.05").Err(); err != nil {
		t.Fatal(err)
	}
	l := server.ReadLatency(ctx, redisview.ServerFor(conn.Client()))
	if l.Err != "" || l.Threshold.V != 10 || len(l.Events) == 0 {
		t.Fatalf("after DEBUG SLEEP: %+v", l)
	}
	ev := l.Events[0]
	if ev.Name != "command" || ev.Max < 40*time.Millisecond || len(ev.History) == 0 || ev.History[0].Latency < 40*time.Millisecond {
		t.Errorf("event = %+v", ev)
	}
	if time.Since(ev.Time) > time.Minute {
		t.Errorf("event time %v", ev.Time)
	}
}

func TestOwnLatencyCounted(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	for range 20 {
		conn.Client().Ping(ctx)
	}
	l := conn.OwnLatency()
	if l.Count < 20 || l.Max <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max || l.Window != time.Minute {
		t.Errorf("own latency = %+v", l)
	}
}
