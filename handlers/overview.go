package handlers

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// overview renders one connection's overview; the websocket keeps it live.
func (a *App) overview(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	ov := a.overviews[conn.Name].Latest(c.Request().Context(), 3*time.Second)
	vm := overviewVM(ov, a.now())
	pc := conn.PackChoice()
	vm.Pack = packLine(pc)
	vm.Headroom, vm.HeadroomNote = headroomVM(ov.Headroom, pc)
	a.overviewViolations(&vm, conn.Name)
	a.overviewFamilies(&vm, conn.Name, a.now())
	return render(c, http.StatusOK, vm, views.OverviewPage(a.page(c, conn.Name, conn.Name), vm))
}

func overviewFragment(vm views.OverviewVM) templ.Component { return views.OverviewLive(vm, true) }

const overviewKind = "overview"

// OverviewTopic is one connection's live overview: "overview:NAME".
type OverviewTopic struct{ Conn string }

func (t OverviewTopic) String() string    { return overviewKind + ":" + t.Conn }
func (OverviewTopic) Level() action.Level { return action.Viewer }

func parseOverviewTopic(arg string) (Topic, error) {
	if !redisview.ValidName(arg) {
		return nil, ErrUnknownTopic
	}
	return OverviewTopic{Conn: arg}, nil
}

// source polls the connection's overview and renders its live fragment.
func (t OverviewTopic) source(a *App) (func() live.Source, error) {
	c, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	reader := a.overviews[c.Name]
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			c.EnsurePack(a.conns.Packs())
			ov := reader.Read(ctx)
			vm := overviewVM(ov, a.now())
			pc := c.PackChoice()
			vm.Pack = packLine(pc)
			vm.Headroom, vm.HeadroomNote = headroomVM(ov.Headroom, pc)
			a.overviewViolations(&vm, c.Name)
			a.overviewFamilies(&vm, c.Name, a.now())
			return renderBytes(ctx, overviewFragment(vm))
		})
	}, nil
}

// packLine says which pack explains a connection's keys.
func packLine(pc redisview.PackChoice) string {
	switch {
	case pc.Pack != nil:
		return pc.Pack.Name + " — " + pc.Why
	case pc.Why != "":
		return "none — " + pc.Why
	}
	return ""
}

// statusText says how long a connection has been in its state.
func statusText(st redisview.Status) string {
	switch {
	case st.Checked.IsZero():
		return "connecting…"
	case st.Up:
		return "connected"
	default:
		return "disconnected since " + format.Clock(st.Since)
	}
}

// overviewVM converts the domain overview into the view model.
func overviewVM(ov stats.Overview, now time.Time) views.OverviewVM {
	vm := views.OverviewVM{
		Conn:       ov.Conn,
		Display:    ov.Display,
		WSURL:      route.LiveURL(OverviewTopic{Conn: ov.Conn}.String()),
		Connected:  ov.Status.Up || ov.Status.Checked.IsZero() && ov.Err == "",
		StatusText: statusText(ov.Status),
		StatusErr:  ov.Status.Err,
		ReadErr:    ov.Err,
		Sentinel:   sentinelVM(ov.Sentinel),
	}
	if ov.Status.Checked.IsZero() && ov.Err == "" {
		vm.StatusText = "connected"
	}
	if ov.Err != "" && ov.Status.Up {
		// The monitor has not noticed yet; the failed read is the news.
		vm.ReadErr = ov.Err
	}
	if ov.Err != "" {
		return vm
	}
	serverTiles(&vm, ov.Server)
	vm.Spark = sparks(ov, now)
	keyspaceRows(&vm, ov)
	vm.Cluster = clusterVM(ov.Cluster)
	return vm
}

// serverTiles is the server's figures, one tile each; a figure the server
// would not give is said muted, and why is listed once.
func serverTiles(vm *views.OverviewVM, s stats.ServerStats) {
	tile := func(label, testID string, o redisview.Opt[string], hint string) views.Tile {
		if !o.OK {
			if !o.Pending {
				vm.Unavailable = appendOnce(vm.Unavailable, label+": "+o.Why)
			}
			return views.Tile{Label: label, Value: o.Why, TestID: testID, Muted: true}
		}
		return views.Tile{Label: label, Value: o.V, Hint: hint, TestID: testID}
	}
	memHint := ""
	if s.MaxMemory.OK && s.MaxMemory.V > 0 {
		memHint = "of " + format.Bytes(s.MaxMemory.V) + " maxmemory"
	}
	peakHint := ""
	if s.Mode.OK {
		peakHint = s.Mode.V + " mode"
	}
	hitHint := ""
	if s.HitRatio.OK {
		hitHint = format.Plural(s.Hits, "hit", "hits") + ", " + format.Plural(s.Misses, "miss", "misses")
	}
	vm.Server = []views.Tile{
		tile("Version", "version", s.Version, peakHint),
		tile("Uptime", "uptime", mapOpt(s.Uptime, format.Uptime), ""),
		tile("Memory used", "memory", mapOpt(s.UsedMemory, format.Bytes), memHint),
		tile("Memory peak", "memory-peak", mapOpt(s.PeakMemory, format.Bytes), ""),
		opsTile(s, vm),
		tile("Clients", "clients", mapOpt(s.Clients, format.Count), ""),
		tile("Hit ratio", "hit-ratio", mapOpt(s.HitRatio, percent1), hitHint),
		tile("Evicted keys", "evicted", mapOpt(s.Evicted, format.Count), ""),
		tile("Expired keys", "expired", mapOpt(s.Expired, format.Count), ""),
		notificationsTile(s, vm),
	}
}

// keyspaceRows is the keys of each database and their share of the total.
func keyspaceRows(vm *views.OverviewVM, ov stats.Overview) {
	var total int64
	for _, db := range ov.DBs {
		total += db.Keys
	}
	vm.TotalKeys = format.Count(total)
	vm.KeyspaceNote = "Source: " + ov.KeyspaceSource
	vm.OnlyDB0 = ov.Databases == 1
	if ov.KeyspaceSource == stats.SourceSweep {
		vm.KeyspaceNote += " (this server's INFO has no keyspace section)"
	}
	for _, db := range ov.DBs {
		row := views.DBRow{
			Index:   db.Index,
			Href:    route.DatabaseURL(ov.Conn, db.Index),
			Keys:    format.Count(db.Keys),
			Expires: optString(mapOpt(db.Expires, format.Count)),
			AvgTTL:  optString(mapOpt(db.AvgTTL, format.Duration)),
		}
		if total > 0 {
			row.SharePct = int(db.Keys * 100 / total)
		}
		if db.Estimated {
			row.Note = "estimated from " + format.Percent(db.Coverage, 0) + " of keys"
		}
		vm.DBs = append(vm.DBs, row)
	}
}

// opsTile shows the applications' command rate, Keydeck's own beside it:
// "Ops/sec 12 · Keydeck 480/s", with "≈" when the two counters could not
// be compared at one moment.
func opsTile(s stats.ServerStats, vm *views.OverviewVM) views.Tile {
	t := views.Tile{Label: "Ops/sec", TestID: "ops"}
	if s.OwnOpsPerSec.OK {
		t.Hint = "Keydeck " + format.Rate(s.OwnOpsPerSec.V) + "/s"
	}
	switch o := s.OpsPerSec; {
	case o.OK:
		t.Value = format.Rate(o.V)
		if s.OpsApprox {
			t.Value = "≈ " + t.Value
		}
	case o.Pending:
		// Rates compare two reads; the next one comes within a tick.
		t.Value = o.Why
	case s.TotalOpsPerSec.OK:
		t.Value = format.Rate(s.TotalOpsPerSec.V)
		t.Hint = "all clients, Keydeck's own included (" + o.Why + ")"
	default:
		t.Value, t.Muted, t.Hint = o.Why, true, ""
		vm.Unavailable = appendOnce(vm.Unavailable, "Ops/sec: "+o.Why)
	}
	return t
}

func notificationsTile(s stats.ServerStats, vm *views.OverviewVM) views.Tile {
	t := views.Tile{Label: "Keyspace events", TestID: "notifications"}
	switch {
	case !s.Notifications.OK:
		// Not known, which is not "disabled": CONFIG GET refused (ACL,
		// managed Redis) or the flags not reported.
		t.Value, t.Muted, t.Hint = "unknown", true, s.Notifications.Why
		if s.Keyspace.Refused || strings.Contains(s.Notifications.Why, "CONFIG GET") {
			t.Value = "unknown (CONFIG refused)"
		}
		vm.Unavailable = appendOnce(vm.Unavailable, "Keyspace events: "+s.Notifications.Why+" — live views poll instead")
	case s.KeyspaceEventsOn() && s.Keyspace.Subscribed:
		t.Value, t.Hint = "enabled", "flags "+s.Notifications.V+"; live views use them since "+format.Clock(s.Keyspace.Since)
	case s.KeyspaceEventsOn():
		// Turned on moments ago: the watcher notices within a second.
		t.Value, t.Hint = "enabled, not used yet", "flags "+s.Notifications.V+"; Keydeck is not subscribed yet, live views poll"
	case s.NotificationsEnabled():
		t.Value, t.Hint = "not used (no K)", "flags "+s.Notifications.V+"; Keydeck follows keyspace (K) events only, live views poll"
	default:
		t.Value, t.Hint = "disabled", "live views poll"
	}
	return t
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func mapOpt[T any](o redisview.Opt[T], f func(T) string) redisview.Opt[string] {
	if !o.OK {
		return redisview.Opt[string]{Why: o.Why, Pending: o.Pending}
	}
	return redisview.Some(f(o.V))
}

func optString(o redisview.Opt[string]) string {
	if !o.OK {
		if o.Pending {
			return o.Why
		}
		return "—"
	}
	return o.V
}

func percent1(ratio float64) string { return format.Percent(ratio, 1) }
