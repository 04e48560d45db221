package limits

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Ranking is pure: a snapshot in, the page's families out (no Redis).
func TestRankLimits(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	win := &schema.Family{ID: "login-window", Role: schema.RoleCounterWindow, Type: "string", Params: &schema.CounterWindowParams{Limit: 5, Window: time.Minute}}
	quiet := &schema.Family{ID: "quiet", Role: schema.RoleCounterWindow, Type: "string", Params: &schema.CounterWindowParams{Limit: 100, Window: time.Minute}}
	unread := &schema.Family{ID: "unread", Role: schema.RoleCounterWindow, Type: "string", Params: &schema.CounterWindowParams{Limit: 1, Window: time.Minute}}
	lock := &schema.Family{ID: "job-lock", Role: schema.RoleLock, Type: "string", Params: &schema.LockParams{Value: "uuid"}}
	row := func(f *schema.Family, key string, count int64, pttl time.Duration) Row {
		return Row{Key: key, Family: f, ReadAt: t0, PTTL: pttl, State: decode.WindowRow{Count: count}, Vars: []schema.Var{{Name: "user", Value: key[2:], Raw: key[2:]}}}
	}
	snap := Snapshot{Families: []FamilySnap{
		{Family: quiet, Class: decode.ClassLimit, Read: true, Total: 1, Rows: []Row{row(quiet, "q:ann", 1, time.Minute)}},
		{Family: win, Class: decode.ClassLimit, Read: true, Total: 3, Rows: []Row{
			row(win, "w:bob", 2, time.Minute),
			row(win, "w:ann", 5, time.Minute),           // throttled: most constrained
			row(win, "w:gone", 5, 500*time.Millisecond), // expired by now
		}},
		{Family: unread, Class: decode.ClassLimit},
		{Family: lock, Class: decode.ClassLock, Read: true, Total: 1, Rows: []Row{{Key: "l:1", Family: lock, ReadAt: t0, PTTL: time.Minute, State: decode.HeldRow{}}}},
	}}
	now := t0.Add(time.Second)
	for _, tc := range []struct {
		name      string
		filter    string
		fams      []string // families in order
		first     string   // the first family's first row
		hidden    int      // the first family's rows not matching
		throttled int      // the first family's throttled rows
	}{
		{"throttled family first, gone row dropped, unread and locks left out", "", []string{"login-window", "quiet"}, "w:ann", 0, 1},
		{"a filter keeps the families it matches", "bob", []string{"login-window"}, "w:bob", 1, 0},
		{"a filter matching nothing", "zed", nil, "", 0, 0},
	} {
		got := RankLimits(snap, tc.filter, now)
		var ids []string
		for _, r := range got {
			ids = append(ids, r.Family.ID)
		}
		if len(ids) != len(tc.fams) || (len(ids) > 0 && ids[0] != tc.fams[0]) {
			t.Errorf("%s: families %v, want %v", tc.name, ids, tc.fams)
			continue
		}
		if len(got) == 0 {
			continue
		}
		if got[0].Shown[0].Row.Key != tc.first || got[0].Hidden != tc.hidden || got[0].Throttled != tc.throttled {
			t.Errorf("%s: first row %q, hidden %d, throttled %d", tc.name, got[0].Shown[0].Row.Key, got[0].Hidden, got[0].Throttled)
		}
		for _, r := range got[0].Shown {
			if r.Row.Key == "w:gone" {
				t.Errorf("%s: an expired row is shown", tc.name)
			}
		}
	}
	// The snapshot's rows are not reordered (another page reads them).
	if snap.Families[1].Rows[0].Key != "w:bob" {
		t.Error("ranking sorted the snapshot's rows in place")
	}
}

// Locks held come first, then cooldowns, then families holding none.
func TestRankLocks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	empty := &schema.Family{ID: "empty-lock", Role: schema.RoleLock, Type: "string"}
	cool := &schema.Family{ID: "cooldown", Role: schema.RoleCooldown, Type: "string"}
	held := &schema.Family{ID: "held", Role: schema.RoleLock, Type: "string"}
	snap := Snapshot{Families: []FamilySnap{
		{Family: empty, Class: decode.ClassLock, Read: true, Total: 0},
		{Family: cool, Class: decode.ClassLock, Read: true, Total: 1, Rows: []Row{{Key: "c:1", Family: cool, ReadAt: t0, PTTL: time.Minute, State: decode.HeldRow{}}}},
		{Family: held, Class: decode.ClassLock, Read: true, Total: 1, Rows: []Row{{Key: "h:1", Family: held, ReadAt: t0, PTTL: time.Minute, State: decode.HeldRow{}}}},
	}}
	got := RankLocks(snap, "", t0)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.Family.ID)
	}
	if len(ids) != 3 || ids[0] != "held" || ids[1] != "cooldown" || ids[2] != "empty-lock" {
		t.Errorf("order %v", ids)
	}
}

// Kept says which keys a family's rows are.
func TestKept(t *testing.T) {
	rows := func(n int) []Row { return make([]Row, n) }
	for _, tc := range []struct {
		name string
		f    FamilySnap
		want Kept
	}{
		{"first pass running", FamilySnap{Total: -1, Seen: 40, Rows: rows(10)}, Kept{Running: true, Found: 40}},
		{"cut to the most constrained", FamilySnap{Total: 500, Seen: 480, Rows: rows(100)}, Kept{Cut: true, Of: 500}},
		{"every key", FamilySnap{Total: 7, Rows: rows(7)}, Kept{Of: 7}},
		{"more rows than the last pass found", FamilySnap{Total: 3, Rows: rows(5)}, Kept{Of: 5}},
	} {
		if got := tc.f.Kept(100); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
