package handlers

import (
	"context"
	"fmt"
	"github.com/keydeck/keydeck/views/chart"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/server"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// latencyPage shows one server's latency monitor and Keydeck's own
// round-trip latency to it.
func (a *App) latencyPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	srv, err := serverOf(c, conn, route.LatencyURL)
	if err != nil {
		return err
	}
	l := a.readLatency(c.Request().Context(), conn.Name, srv.Server)
	vm := latencyVM(conn.Name, l, conn.OwnLatency(), a.now())
	vm.Own.Scope = ownScope(conn)
	vm.Picker = srv.Picker
	vm.WSURL = route.LiveURL(LatencyTopic{Conn: conn.Name, Node: srv.Node.Addr}.String())
	if a.mayConfigure(c) && l.Threshold.OK && l.Threshold.V == 0 {
		vm.Form = a.configForm(c, conn.Name, srv.Node.Addr, "latency-monitor-threshold", "100",
			"Record events slower than (milliseconds)", "Preview turning monitoring on…", "latency-on-form")
	}
	return render(c, http.StatusOK, vm, views.LatencyPage(a.page(c, "Latency · "+conn.Name, conn.Name), vm))
}

const latencyKind = "latency"

// LatencyTopic is one server's latency page, live:
// "latency:conn=NAME&node=ADDR" (node "" is the connection's own server).
type LatencyTopic struct{ Conn, Node string }

func (t LatencyTopic) String() string {
	return latencyKind + ":" + url.Values{"conn": {t.Conn}, "node": {t.Node}}.Encode()
}

func (LatencyTopic) Level() action.Level { return action.Viewer }

func parseLatencyTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil || !redisview.ValidName(q.Get("conn")) {
		return nil, ErrUnknownTopic
	}
	return LatencyTopic{Conn: q.Get("conn"), Node: q.Get("node")}, nil
}

// source resolves the server afresh each poll: a cluster node may leave.
func (t LatencyTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			var l server.Latency
			if srv, err := conn.Server(ctx, t.Node); err == nil {
				l = a.readLatency(ctx, conn.Name, srv)
			} else {
				l = server.Latency{Err: "This server could not be read: " + conn.SafeErr(err), Down: true}
			}
			vm := latencyVM(conn.Name, l, conn.OwnLatency(), a.now())
			vm.Own.Scope = ownScope(conn)
			return renderBytes(ctx, views.LatencyLive(vm, true))
		})
	}, nil
}

// ownScope: Keydeck keeps one histogram of its round trips per
// connection, so on a cluster it covers every node, not the one shown.
func ownScope(conn *redisview.Conn) string {
	if conn.IsCluster() {
		return "Every command or pipeline Keydeck sent any node of this cluster connection (one histogram for all its nodes, not this node alone)"
	}
	return ""
}

func latencyVM(conn string, l server.Latency, own redisview.OwnLatency, now time.Time) views.LatencyVM {
	vm := views.LatencyVM{Conn: conn, Own: ownLatencyVM(own)}
	switch t := l.Threshold; {
	case !t.OK:
		vm.Threshold = "Monitor threshold " + t.Why
	case t.V == 0:
		vm.Threshold = "latency-monitor-threshold 0"
		vm.Off = "Latency monitoring is off: the server records no event (set latency-monitor-threshold to a number of milliseconds to turn it on)."
	default:
		vm.Threshold = "Events slower than " + strconv.FormatInt(t.V, 10) + " ms are recorded (latency-monitor-threshold)"
	}
	if l.Down {
		vm.Down = "Disconnected: " + l.Err
		return vm
	}
	vm.Err = l.Err
	if l.Err == "" && len(l.Events) == 0 {
		vm.Empty = "No latency event recorded since the server started or was last reset."
	}
	for _, e := range l.Events {
		vm.Events = append(vm.Events, views.LatencyRow{Name: e.Name, Time: format.Time(e.Time), Latest: ms(e.Latest), Max: ms(e.Max),
			Chart: latencyChart(e, now), Samples: latencySamples(e)})
	}
	if l.More > 0 {
		vm.More = fmt.Sprintf("%s more not shown.", format.Plural(int64(l.More), "event", "events"))
	}
	return vm
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" }

// latencyChart draws an event's history up to now: milliseconds from 0
// up, each sample a dot titled with its own time. The window reaches
// back to the oldest sample kept (the server keeps 160).
func latencyChart(e server.LatencyEvent, now time.Time) chart.Chart {
	h := e.History
	if e.HistoryErr != "" {
		return chart.Chart{TestID: "latency-chart", Empty: e.HistoryErr}
	}
	var pts []chart.Point
	oldest := now
	for _, s := range h {
		pts = append(pts, chart.Point{At: s.Time, V: float64(s.Latency.Milliseconds()),
			Title: ms(s.Latency) + " at " + format.Time(s.Time)})
		if s.Time.Before(oldest) {
			oldest = s.Time
		}
	}
	// Not shorter than a minute: a sample just now still has room.
	span := max(now.Sub(oldest), time.Minute)
	return chart.Build(chart.Spec{TestID: "latency-chart", Title: "Latency", Units: chart.Plain("ms"), End: now, Span: span,
		ZeroBased: true, Dots: true, Empty: "No history kept for this event."}, chart.Series{Class: chart.Palette[0], Points: pts})
}

// latencySamples says how many samples the history holds and when they
// were taken.
func latencySamples(e server.LatencyEvent) string {
	h := e.History
	if e.HistoryErr != "" || len(h) == 0 {
		return ""
	}
	return format.Plural(int64(len(h)), "sample", "samples") + " from " + format.Time(h[0].Time) + " to " + format.Time(h[len(h)-1].Time)
}

func ownLatencyVM(l redisview.OwnLatency) views.OwnLatencyVM {
	vm := views.OwnLatencyVM{Window: "over the last " + format.Duration(l.Window)}
	if l.Count == 0 {
		vm.Empty = "No round trip in that time."
		return vm
	}
	pct := func(d time.Duration, over bool) string {
		if over {
			return "> 5 s"
		}
		return "≤ " + roundTrip(d)
	}
	vm.Count = format.Count(l.Count)
	vm.P50, vm.P90, vm.P99 = pct(l.P50, l.Over50), pct(l.P90, l.Over90), pct(l.P99, l.Over99)
	vm.Max = roundTrip(l.Max)
	return vm
}

// roundTrip writes a round trip's time: most take well under a
// millisecond.
func roundTrip(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	}
	return micros(d)
}
