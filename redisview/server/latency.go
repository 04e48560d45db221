package server

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// MaxLatencyEvents bounds the events read (the server has a few dozen
// kinds); each event's HISTORY holds at most 160 samples on the server.
const MaxLatencyEvents = 32

// LatencyEvent is one LATENCY LATEST row.
type LatencyEvent struct {
	Name        string
	Time        time.Time // of the latest spike
	Latest, Max time.Duration
	History     []LatencySample // oldest first
	HistoryErr  string
}

// LatencySample is one LATENCY HISTORY point.
type LatencySample struct {
	Time    time.Time
	Latency time.Duration
}

// Latency is one server's latency monitor.
type Latency struct {
	// Threshold is latency-monitor-threshold in milliseconds; 0 means the
	// monitor is off.
	Threshold redisview.Opt[int64]
	Events    []LatencyEvent
	More      int // events left off
	Err       string
	Down      bool
}

// ReadLatency reads LATENCY LATEST and the threshold in one round trip,
// then each event's HISTORY in another.
func ReadLatency(ctx context.Context, srv redisview.Server) Latency {
	cl := srv.Client()
	var latest *redis.Cmd
	var thr *redis.MapStringStringCmd
	cmds, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		latest = p.Do(ctx, "latency", "latest")
		thr = p.ConfigGet(ctx, "latency-monitor-threshold")
		return nil
	})
	var out Latency
	if err := redisview.PipelineErr(cmds, err); err != nil && redisview.IsConnErr(err) {
		out.Err, out.Down = "the server did not answer: "+err.Error(), true
		return out
	}
	out.Threshold = configInt(thr, "latency-monitor-threshold")
	rows, err := latest.Slice()
	if err != nil {
		out.Err = redisview.Refusal("LATENCY LATEST", err)
		return out
	}
	for _, r := range rows {
		ev, ok := latencyRow(r)
		if !ok {
			out.Err = fmt.Sprintf("LATENCY LATEST answered a row this page cannot read: %v", r)
			continue
		}
		if len(out.Events) == MaxLatencyEvents {
			out.More++
			continue
		}
		out.Events = append(out.Events, ev)
	}
	readHistories(ctx, cl, out.Events)
	return out
}

func readHistories(ctx context.Context, cl redis.UniversalClient, evs []LatencyEvent) {
	if len(evs) == 0 {
		return
	}
	hs := make([]*redis.Cmd, len(evs))
	_, _ = cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, ev := range evs {
			hs[i] = p.Do(ctx, "latency", "history", ev.Name)
		}
		return nil
	})
	for i, h := range hs {
		rows, err := h.Slice()
		if err != nil {
			evs[i].HistoryErr = redisview.Refusal("LATENCY HISTORY", err)
			continue
		}
		for _, r := range rows {
			a, ok := r.([]any)
			if !ok || len(a) < 2 {
				continue
			}
			ts, ok1 := a[0].(int64)
			ms, ok2 := a[1].(int64)
			if ok1 && ok2 {
				evs[i].History = append(evs[i].History, LatencySample{Time: time.Unix(ts, 0), Latency: time.Duration(ms) * time.Millisecond})
			}
		}
	}
}

// latencyRow reads [event, unix time, latest ms, max ms].
func latencyRow(r any) (LatencyEvent, bool) {
	a, ok := r.([]any)
	if !ok || len(a) < 4 {
		return LatencyEvent{}, false
	}
	name, ok0 := a[0].(string)
	ts, ok1 := a[1].(int64)
	last, ok2 := a[2].(int64)
	mx, ok3 := a[3].(int64)
	if !ok0 || !ok1 || !ok2 || !ok3 {
		return LatencyEvent{}, false
	}
	return LatencyEvent{Name: name, Time: time.Unix(ts, 0), Latest: time.Duration(last) * time.Millisecond, Max: time.Duration(mx) * time.Millisecond}, true
}
