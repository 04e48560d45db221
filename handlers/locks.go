package handlers

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func (a *App) locksPage(c echo.Context) error {
	conn, t, snap, err := a.opsPage(c, locksKind)
	if err != nil {
		return err
	}
	vm := locksVM(conn, snap, t, a.now())
	return render(c, http.StatusOK, vm, views.LocksPage(a.page(c, "Locks · "+conn.Name, conn.Name), vm))
}

// shortLine counts the locks too short for the sweep to read, or says
// that they may be missed.
func shortLine(snap limits.Snapshot) string {
	k := snap.Keyspace
	if k.On {
		return fmt.Sprintf("Locks that appeared and vanished between two reads (keyspace notifications, since %s): %s.",
			format.Clock(k.Since), format.Count(k.ShortLocks))
	}
	why := k.Why
	if why == "" {
		why = "whether keyspace notifications are on is not known yet"
	}
	return "Locks held for less than the sweep interval (every lock is re-read every " + format.Duration(snap.Budget.Refresh) +
		", new ones found at the sweep's pace) may be missed: " + why + "."
}

// lockValueText says what a family's value holds: its role's presenter
// says it.
func lockValueText(f *schema.Family) string {
	if p, ok := presenterFor(lockPresenters, f); ok && p.value != nil {
		return p.value(f)
	}
	return "lock"
}

func locksVM(conn *redisview.Conn, snap limits.Snapshot, t OpsTopic, now time.Time) views.LocksVM {
	vm := views.LocksVM{Conn: conn.Name, Filter: views.ValidText(t.Filter), FormAction: route.LocksURL(conn.Name),
		WSURL: route.LiveURL(t.String()), Err: snap.Err, Short: shortLine(snap)}
	vm.Status, vm.Reading, vm.Budget, vm.Disconnected = sweepLines(snap, conn.Status(), decode.ClassLock)
	pc := conn.PackChoice()
	switch {
	case pc.Pack == nil && pc.Why == "":
		vm.Empty = "Not known yet: matching the connection to a pack…"
		return vm
	case pc.Pack == nil:
		vm.Empty = "No schema pack explains this connection's keys (" + pc.Why + "), so no key is known to be a lock."
		return vm
	}
	switch {
	case !hasClass(pc.Pack, decode.ClassLock):
		vm.Empty = "No lock family in this pack (" + pc.Pack.Name + "): no family of role " + roleList(lockPresenters) + "."
		return vm
	case snap.Pack != pc.Pack:
		vm.Status, vm.Reading = "", startingLine(pc.Pack, decode.ClassLock)
		return vm
	}
	total := 0
	for _, f := range limits.RankLocks(snap, t.Filter, now) {
		g := views.LockGroup{Family: f.Family.ID, Title: f.Family.Name(), Domain: f.Family.Domain, Role: string(f.Family.Role), DB: f.DB,
			Value: lockValueText(f.Family), Label: keptLabel(f.FamilySnap, snap.Budget.Keep), Hold: holdText(f.Family)}
		for _, rs := range f.Shown {
			g.Rows = append(g.Rows, lockRow(conn.Name, rs.Row, rs.State, t.Act))
		}
		if f.Hidden > 0 {
			g.Note = fmt.Sprintf("%s not match %q.", format.Plural(int64(f.Hidden), "lock kept does", "locks kept do"), t.Filter)
		}
		if len(g.Rows) == 0 && g.Note == "" && f.Passes > 0 {
			g.Note = "No lock held at the last read."
		}
		total += len(g.Rows)
		g.Rows, g.Pager = pageOf(t, g.Family, g.DB, g.Rows)
		vm.Groups = append(vm.Groups, g)
	}
	if total == 0 && t.Filter != "" {
		vm.Empty = fmt.Sprintf("No lock kept matches %q.", t.Filter)
	}
	return vm
}

// holdText says how a family's lock age is known and how long a hold is
// expected to last.
func holdText(f *schema.Family) string {
	s := "the pack gives no TTL, so the age is not known"
	if f.TTL.Max > 0 {
		s = "taken with a TTL of up to " + format.Duration(f.TTL.Max) + " (age is counted from it)"
	}
	if hold := expectedHold(f); hold > 0 {
		return s + "; expected hold ≤ " + format.Duration(hold)
	}
	return s + "; the pack gives no expected hold time"
}

func lockRow(conn string, r *limits.Row, st limits.State, act bool) views.LockRow {
	row := views.LockRow{Key: r.Key, Href: keyHref(conn, r.DB, r.Key), Subject: subject(r.Vars), NoTTL: st.NoTTL}
	if st.OverMax {
		row.Violation = "TTL " + format.Duration(st.TTL) + " above the pack's maximum " + format.Duration(r.Family.TTL.Max)
	}
	if hold := expectedHold(r.Family); hold > 0 && st.Age > hold {
		row.TooLong = true
	}
	switch {
	case r.Err != "":
		row.Err = "not readable as a lock: " + r.Err
	case r.Family.Sensitive:
		row.Holder = "(value not shown: sensitive)"
	case !st.Until.IsZero():
		row.UnlocksAt = format.Time(st.Until)
	default:
		row.Holder = lockHolder(r.Family, st)
	}
	if !st.NoTTL {
		row.TTL = format.Duration(st.TTL)
	}
	switch {
	case st.Age > 0:
		row.Age = format.Duration(st.Age)
	case st.NoTTL:
		row.Age = "unknown (no TTL)"
	case st.OverMax:
		row.Age = "unknown (taken with a longer TTL than the pack's)"
	}
	if !act {
		return row
	}
	row.Actions = appendFix(row.Actions, action.Fix(r.Family, action.FixState{}), conn, r.DB, r.Key)
	return row
}

// lockHolder is a row's holder as its role's presenter says it; the start
// of the value as read when the role has none.
func lockHolder(f *schema.Family, st limits.State) string {
	if p, ok := presenterFor(lockPresenters, f); ok && p.holder != nil {
		return p.holder(st)
	}
	return st.Holder
}
