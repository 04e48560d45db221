package leaderboard

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// MaxTracked bounds the windows a Tracker remembers: they are named by
	// URLs anyone may type, so past this the least recently used is forgotten.
	MaxTracked = 1024
	// MarkFor is how long a moved row stays marked.
	MarkFor = 5 * time.Second
	// ForgetAfter is how long a window nobody polls keeps its activity:
	// past it, the hour it counted is over anyway.
	ForgetAfter = time.Hour
)

// WindowID names one leaderboard window as pages and pollers show it.
type WindowID struct {
	Conn     string
	DB       int
	Key      string
	Start, N int64
}

func (id WindowID) String() string {
	return fmt.Sprintf("%s\x00%d\x00%d\x00%d\x00%s", id.Conn, id.DB, id.Start, id.N, id.Key)
}

// Tracker keeps what Keydeck learns by polling leaderboard windows: per
// window, the last rows read, write activity and recent moves. The zero
// value is ready to use.
type Tracker struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu sync.Mutex
	m  map[string]*Tracked
}

// Peek returns the window's state if a poller has made one.
func (t *Tracker) Peek(id WindowID) *Tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id.String()]
}

// Get returns the window's state, making it. Only pollers call it: a page
// view must not be able to fill the tracker.
func (t *Tracker) Get(id WindowID) *Tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*Tracked{}
	}
	k := id.String()
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	for key, x := range t.m {
		if key != k && now.Sub(x.lastUsed()) > ForgetAfter {
			delete(t.m, key)
		}
	}
	st := t.m[k]
	if st == nil {
		if len(t.m) >= MaxTracked {
			var oldest string
			var at time.Time
			for key, x := range t.m {
				if u := x.lastUsed(); oldest == "" || u.Before(at) {
					oldest, at = key, u
				}
			}
			delete(t.m, oldest)
		}
		st = &Tracked{activity: NewActivity(), marks: map[string]mark{}}
		t.m[k] = st
	}
	st.touch(now)
	return st
}

// Tracked is one window's state. Pollers of the same window (the plain and
// the support rendering) share it, so a change is counted once however
// many renderings watch it.
type Tracked struct {
	activity *Activity
	mu       sync.Mutex
	last     []Entry // nil until the first read
	marks    map[string]mark
	used     atomic.Int64 // Unix ns of the last Get or read
}

func (st *Tracked) touch(now time.Time) { st.used.Store(now.UnixNano()) }

func (st *Tracked) lastUsed() time.Time { return time.Unix(0, st.used.Load()) }

type mark struct {
	move Move
	at   time.Time
}

// Activity is the window's score changes per minute.
func (st *Tracked) Activity() *Activity { return st.activity }

// Observe records one read: activity and moves against the previous read
// by any poller of this window, and returns the moves still worth marking
// (made within MarkFor), by member.
func (st *Tracked) Observe(cur []Entry, now time.Time) map[string]Move {
	st.touch(now)
	st.mu.Lock()
	prev := st.last
	st.last = cur
	st.mu.Unlock()
	var moves map[string]Move
	// A first read has nothing to compare with: nothing is new.
	st.activity.Observe(prev, cur, now)
	if prev != nil {
		moves = Moves(prev, cur)
	}
	return st.note(moves, now)
}

// note records this read's moves and returns those still worth marking.
func (st *Tracked) note(moves map[string]Move, now time.Time) map[string]Move {
	st.mu.Lock()
	defer st.mu.Unlock()
	for m, mv := range moves {
		if mv.Kind != MoveSame {
			st.marks[m] = mark{move: mv, at: now}
		}
	}
	out := map[string]Move{}
	for m, mk := range st.marks {
		if now.Sub(mk.at) > MarkFor {
			delete(st.marks, m)
			continue
		}
		out[m] = mk.move
	}
	return out
}
