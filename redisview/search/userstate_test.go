package search

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// A user page scans when none ran for Rescan, continues an unfinished
// pass after Continue, re-checks every derived key after Reprobe, and
// otherwise re-reads the keys found.
func TestUserStatePlan(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := UserCadence{Rescan: 30 * time.Second, Continue: 5 * time.Second, Reprobe: 2 * time.Second}
	known := []UserHit{{Hit: Hit{DB: 3, Key: "k"}}}
	cur := map[string]redisview.Cursor{"s": "42"}
	for _, tc := range []struct {
		name           string
		st             UserState
		at             time.Duration
		scan, reprobe  bool
		resumesCursors bool
	}{
		{"first read", UserState{}, 0, true, true, false},
		{"tick after a finished pass", UserState{Scanned: t0, Probed: t0, Known: known}, time.Second, false, false, false},
		{"reprobe due", UserState{Scanned: t0, Probed: t0}, 2 * time.Second, false, true, false},
		{"new pass due", UserState{Scanned: t0, Probed: t0}, 30 * time.Second, true, true, false},
		{"unfinished pass, not yet", UserState{Scanned: t0, Probed: t0, Cursors: cur}, 4 * time.Second, false, true, false},
		{"unfinished pass continues", UserState{Scanned: t0, Probed: t0, Cursors: cur}, 5 * time.Second, true, true, true},
	} {
		var q UserQuery
		tc.st.Plan(&q, t0.Add(tc.at), c)
		if q.Scan != tc.scan || q.Reprobe != tc.reprobe || (q.Cursors != nil) != tc.resumesCursors || len(q.Known) != len(tc.st.Known) {
			t.Errorf("%s: scan %v reprobe %v cursors %v known %d", tc.name, q.Scan, q.Reprobe, q.Cursors, len(q.Known))
		}
	}
}

// A read's scans that waited for the budget are tried again at the next
// read (Scanned stays); the keys found become Known.
func TestUserStateRecord(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	hits := []UserHit{{Hit: Hit{DB: 1, Key: "a"}}}
	unfinished := []ScanState{{Scan: Scan{ID: "s"}, Cursor: "7"}}
	var st UserState
	st.Record(UserQuery{Scan: true, Reprobe: true}, UserResult{Hits: hits, Scans: unfinished, Waiting: true}, t0)
	if !st.Scanned.IsZero() || !st.Probed.Equal(t0) || st.Cursors["s"] != "7" || len(st.Known) != 1 {
		t.Fatalf("waiting read: %+v", st)
	}
	st.Record(UserQuery{Scan: true}, UserResult{Hits: hits, Scans: []ScanState{{Scan: Scan{ID: "s"}, Done: true}}}, t0.Add(time.Second))
	if !st.Scanned.Equal(t0.Add(time.Second)) || st.Cursors != nil || !st.Probed.Equal(t0) {
		t.Fatalf("finished read: %+v", st)
	}
}

// A page load's state goes to its topic's first poll once, and only
// while fresh; states nobody took are dropped.
func TestUserHandoffs(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := NewUserHandoffs(5*time.Second, func() time.Time { return now })
	st := UserState{Cursors: map[string]redisview.Cursor{"s": "1"}}
	h.Put("user:a", st)
	if got := h.Take("user:a"); got.Cursors["s"] != "1" {
		t.Fatalf("taken %+v", got)
	}
	if got := h.Take("user:a"); got.Cursors != nil {
		t.Fatalf("taken twice: %+v", got)
	}
	h.Put("user:b", st)
	now = now.Add(6 * time.Second)
	if got := h.Take("user:b"); got.Cursors != nil {
		t.Fatalf("stale state taken: %+v", got)
	}
	h.Put("user:c", st)
	now = now.Add(2 * time.Minute)
	h.Put("user:d", st)
	if h.Len() != 1 {
		t.Fatalf("%d states kept, want only the fresh one", h.Len())
	}
}
