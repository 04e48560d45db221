// Package limits keeps the rate-limit and lock keys of a connection's pack
// in view: one budgeted background sweep per connection finds the keys of
// every family the role registry classes a limit or a lock
// (decode.ClassOf), reads each by its role's row reader (decode.ReadRows:
// one pipeline a batch), keeps the most constrained rows of each family,
// and re-reads the kept rows now and then. Pages read the sweep's result,
// never Redis: however many viewers, the server sees one sweep. No code
// here knows a role: a row's state at a later time is its role's
// (decode.RowState).
package limits

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// swept reports whether the sweep keeps rows of family f: the role
// registry classes it a limit (the Rate limits page) or a lock (the Locks
// page).
func swept(f *schema.Family) bool {
	c := decode.ClassOf(f)
	return c == decode.ClassLimit || c == decode.ClassLock
}

// Row is one key as the sweep last read it. Times are measured from ReadAt;
// At gives the row's state at any later time.
type Row struct {
	DB     int
	Key    string
	Family *schema.Family
	Vars   []schema.Var
	ReadAt time.Time
	PTTL   time.Duration // at ReadAt; negative: no expiry
	Err    string        // why the value could not be read as its role says
	// State is the row as its role read it (a decode.BucketRow, a
	// decode.HeldRow …: the role registry's row reader); nil when Err
	// says why, or when the key was gone.
	State decode.RowState
}

// State is a row at one moment (decode.Moment: each role's row state
// gives it).
type State decode.Moment

// Fraction is Used/Limit, 0..1.
func (s State) Fraction() float64 {
	if s.Limit <= 0 {
		return 0
	}
	return math.Max(0, math.Min(1, s.Used/s.Limit))
}

// Severity orders rows: throttled or locked first, then nearest to the
// limit; for locks, those without a TTL or above their maximum TTL first,
// then the oldest.
func (s State) Severity() float64 {
	switch {
	case s.Gone:
		return -1
	case s.NoTTL || s.OverMax:
		return 3
	case s.Throttled || s.Locked:
		return 2 + s.Fraction()
	}
	return s.Fraction()
}

// At is the row's state at now: a bucket refilled by the pack's rate, a
// window and a lock whose TTL ran on (its role's RowState says how).
func (r Row) At(now time.Time) State {
	s := decode.Since{Family: r.Family, ReadAt: r.ReadAt, PTTL: r.PTTL, Now: now}
	st := r.State
	if r.Err != "" {
		// The value is unreadable, its TTL is not: a lock without one is
		// still held past its TTL.
		st = decode.TTLState(r.Family)
	}
	if st == nil {
		return State{Gone: s.Gone()}
	}
	return State(st.At(s))
}

// readRows reads rows (of one database) in one pipeline, each by its
// role's row reader in the registry: a few O(1), bounded commands and its
// PTTL. A key that is gone gets PTTL -2.
func readRows(ctx context.Context, c redis.Cmdable, rows []*Row, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	items := make([]decode.Item, len(rows))
	for i, r := range rows {
		items[i] = decode.Item{Match: schema.Match{Family: r.Family, Vars: r.Vars}, Key: r.Key}
	}
	read, err := decode.ReadRows(ctx, c, rows[0].DB, items, now)
	if err != nil {
		return err
	}
	for i, r := range rows {
		r.ReadAt, r.PTTL, r.State, r.Err = now, read[i].PTTL, read[i].State, read[i].Err
	}
	return nil
}

// Matches reports whether the row's placeholder values (decoded: an
// account in base64 is matched as its text) or its key contain q,
// ignoring case. An empty q matches every row.
func (r Row) Matches(q string) bool {
	q = strings.TrimSpace(q)
	if q == "" {
		return true
	}
	lq := strings.ToLower(q)
	for _, v := range r.Vars {
		if strings.Contains(strings.ToLower(v.Value), lq) || strings.Contains(strings.ToLower(v.Raw), lq) {
			return true
		}
	}
	return false
}

// Sort orders rows most constrained first at now; ties by key, so the
// order is stable from tick to tick.
func Sort(rows []Row, now time.Time) {
	sev := make(map[string]float64, len(rows))
	for i := range rows {
		sev[rows[i].Key] = rows[i].At(now).Severity()
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		sa, sb := sev[a.Key], sev[b.Key]
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
}
