package handlers

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"net/http"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views"
)

// home lists the connections with their state.
func (a *App) home(c echo.Context) error {
	var items []views.HomeItem
	for _, conn := range a.conns.All() {
		st := conn.Status()
		items = append(items, views.HomeItem{
			Name: conn.Name, Display: conn.Display, Href: "/c/" + conn.Name,
			Up: st.Up, Status: statusText(st),
		})
	}
	return render(c, http.StatusOK, views.HomePage(a.page(c, "Connections", ""), items))
}

// overview renders one connection's overview; the websocket keeps it live.
func (a *App) overview(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	vm := overviewVM(a.overviews[conn.Name].Latest(c.Request().Context(), 3*time.Second), a.now())
	vm.Pack = packLine(conn.PackChoice())
	return render(c, http.StatusOK, views.OverviewPage(a.page(c, conn.Name, conn.Name), vm))
}

func overviewFragment(vm views.OverviewVM) templ.Component { return views.OverviewLive(vm, true) }

func wsURL(topic string) string { return "/ws?topic=" + url.QueryEscape(topic) }

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
		return "disconnected since " + st.Since.UTC().Format("15:04:05 MST")
	}
}

// overviewVM converts the domain overview into the view model.
func overviewVM(ov redisview.Overview, now time.Time) views.OverviewVM {
	vm := views.OverviewVM{
		Conn:       ov.Conn,
		Display:    ov.Display,
		WSURL:      wsURL(overviewTopic(ov.Conn)),
		Connected:  ov.Status.Up || ov.Status.Checked.IsZero() && ov.Err == "",
		StatusText: statusText(ov.Status),
		StatusErr:  ov.Status.Err,
		ReadErr:    ov.Err,
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
	s := ov.Server
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
		memHint = "of " + redisview.FormatBytes(s.MaxMemory.V) + " maxmemory"
	}
	peakHint := ""
	if s.Mode.OK {
		peakHint = s.Mode.V + " mode"
	}
	opsHint := ""
	if s.OpsEstimated {
		opsHint = "from command-count deltas"
	}
	hitHint := ""
	if s.HitRatio.OK {
		hitHint = groupDigits(s.Hits) + " hits, " + groupDigits(s.Misses) + " misses"
	}
	vm.Server = []views.Tile{
		tile("Version", "version", s.Version, peakHint),
		tile("Uptime", "uptime", mapOpt(s.Uptime, formatUptime), ""),
		tile("Memory used", "memory", mapOpt(s.UsedMemory, redisview.FormatBytes), memHint),
		tile("Memory peak", "memory-peak", mapOpt(s.PeakMemory, redisview.FormatBytes), ""),
		tile("Ops/sec", "ops", mapOpt(s.OpsPerSec, formatRate), opsHint),
		tile("Clients", "clients", mapOpt(s.Clients, groupDigits), ""),
		tile("Hit ratio", "hit-ratio", mapOpt(s.HitRatio, formatPct), hitHint),
		tile("Evicted keys", "evicted", mapOpt(s.Evicted, groupDigits), ""),
		tile("Expired keys", "expired", mapOpt(s.Expired, groupDigits), ""),
		notificationsTile(s, &vm),
	}
	vm.Spark = sparks(ov.History)

	var total int64
	for _, db := range ov.DBs {
		total += db.Keys
	}
	vm.TotalKeys = groupDigits(total)
	vm.KeyspaceNote = "Source: " + ov.KeyspaceSource
	if ov.KeyspaceSource == redisview.SourceSweep {
		vm.KeyspaceNote += " (this server's INFO has no keyspace section)"
	}
	for _, db := range ov.DBs {
		row := views.DBRow{
			Index:   db.Index,
			Href:    fmt.Sprintf("/c/%s/db/%d", ov.Conn, db.Index),
			Keys:    groupDigits(db.Keys),
			Expires: optString(mapOpt(db.Expires, groupDigits)),
			AvgTTL:  optString(mapOpt(db.AvgTTL, formatTTL)),
		}
		if total > 0 {
			row.SharePct = int(db.Keys * 100 / total)
		}
		if db.Estimated {
			row.Note = fmt.Sprintf("estimated from %.0f%% of keys", db.Coverage*100)
		}
		vm.DBs = append(vm.DBs, row)
	}
	return vm
}

func notificationsTile(s redisview.ServerStats, vm *views.OverviewVM) views.Tile {
	t := views.Tile{Label: "Keyspace events", TestID: "notifications"}
	switch {
	case !s.Notifications.OK:
		t.Value, t.Muted = s.Notifications.Why, true
		vm.Unavailable = appendOnce(vm.Unavailable, "Keyspace events: "+s.Notifications.Why+" — live views poll instead")
	case s.NotificationsEnabled():
		t.Value, t.Hint = "enabled", "flags "+s.Notifications.V
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

// groupDigits renders 1234567 as "1,234,567".
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func formatRate(f float64) string {
	if f >= 100 {
		return groupDigits(int64(f + 0.5))
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

func formatPct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// formatUptime is coarse on purpose: a value that changes every second would
// make every tick's fragment differ and be re-sent.
func formatUptime(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// formatTTL renders a TTL with two units at most.
func formatTTL(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}
