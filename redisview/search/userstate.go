package search

import (
	"sync"
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// UserCadence is how often a live user page scans: it continues an
// unfinished scan pass at most every Continue and starts a new pass at
// most every Rescan after one finished; every derived key is checked
// again every Reprobe; the ticks between re-read the keys found, with no
// SCAN.
type UserCadence struct {
	Rescan, Continue, Reprobe time.Duration
}

// DefaultUserCadence is the console's.
var DefaultUserCadence = UserCadence{Rescan: 30 * time.Second, Continue: 5 * time.Second, Reprobe: 2 * time.Second}

// UserState is what a user page carries from one read to the next: the
// keys scans found and where the scans stand.
type UserState struct {
	Known   []UserHit
	Cursors map[string]redisview.Cursor
	Scanned time.Time   // the last read whose scans did not wait for budget
	Probed  time.Time   // the last read that checked every derived key
	Scans   []ScanState // the last read with scans: how far each got
}

// Plan sets what the next read of q at now does: it scans when none ran
// for c.Rescan (or c.Continue, resuming unfinished scans), re-checks
// every derived key when due, else re-reads the keys found.
func (st *UserState) Plan(q *UserQuery, now time.Time, c UserCadence) {
	q.Known = st.Known
	wait := c.Rescan
	if st.Cursors != nil {
		wait = c.Continue
	}
	if st.Scanned.IsZero() || now.Sub(st.Scanned) >= wait {
		q.Scan, q.Cursors = true, st.Cursors // keys found stay known: a re-read drops those gone
	}
	q.Reprobe = q.Scan || st.Probed.IsZero() || now.Sub(st.Probed) >= c.Reprobe
}

// Record takes in what the read of q at now found. Scans that waited for
// the scan budget in vain are tried again on the next read.
func (st *UserState) Record(q UserQuery, res UserResult, now time.Time) {
	if q.Scan {
		st.Cursors, st.Scans = res.Cursors(), res.Scans
		if !res.Waiting {
			st.Scanned = now
		}
	}
	if q.Reprobe {
		st.Probed = now
	}
	st.Known = res.Hits
}

// UserHandoffs pass a user page load's state to its live topic's first
// poll, so that opening a page scans once, not twice: by topic, taken
// once, ignored after Keep. The composition root owns one per console.
type UserHandoffs struct {
	keep time.Duration
	now  func() time.Time

	mu sync.Mutex
	m  map[string]handoff
}

type handoff struct {
	st UserState
	at time.Time
}

// handoffDrop: a state no topic took is dropped after this long.
const handoffDrop = time.Minute

// NewUserHandoffs keeps a state for its topic up to keep (nil now: time.Now).
func NewUserHandoffs(keep time.Duration, now func() time.Time) *UserHandoffs {
	if now == nil {
		now = time.Now
	}
	return &UserHandoffs{keep: keep, now: now, m: map[string]handoff{}}
}

// Put leaves st for topic's first poll.
func (h *UserHandoffs) Put(topic string, st UserState) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, v := range h.m { // drop what no topic took
		if now.Sub(v.at) > handoffDrop {
			delete(h.m, k)
		}
	}
	h.m[topic] = handoff{st: st, at: now}
}

// Take returns the state left for topic, once; a zero state when none
// was, or it is older than keep.
func (h *UserHandoffs) Take(topic string) UserState {
	h.mu.Lock()
	v, ok := h.m[topic]
	delete(h.m, topic)
	h.mu.Unlock()
	if !ok || h.now().Sub(v.at) > h.keep {
		return UserState{}
	}
	return v.st
}

// Len is how many states wait for their topic.
func (h *UserHandoffs) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}
