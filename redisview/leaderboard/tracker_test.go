package leaderboard

import (
	"strconv"
	"testing"
	"time"
)

// Window state is keyed by URLs anyone may type: it stays bounded.
func TestTrackerBounded(t *testing.T) {
	var s Tracker
	for i := range MaxTracked + 50 {
		s.Get(WindowID{Conn: "c", Key: strconv.Itoa(i)})
	}
	if n := len(s.m); n != MaxTracked {
		t.Fatalf("states = %d", n)
	}
}

// A move stays marked for MarkFor after the read that saw it, and a
// window's first read marks nothing.
func TestTrackedMarks(t *testing.T) {
	var s Tracker
	st := s.Get(WindowID{Conn: "c", Key: "k", N: 10})
	if s.Peek(WindowID{Conn: "c", Key: "k", N: 10}) != st || s.Peek(WindowID{Conn: "c", Key: "k", N: 11}) != nil {
		t.Fatal("Peek does not find the window Get made, or finds another")
	}
	t0 := time.Unix(1_700_000_000, 0)
	a, b := Entry{Rank: 0, Member: "a", Score: 2}, Entry{Rank: 1, Member: "b", Score: 1}
	if marks := st.Observe([]Entry{a, b}, t0); len(marks) != 0 {
		t.Fatalf("first read marks %v", marks)
	}
	up := Entry{Rank: 0, Member: "b", Score: 3}
	down := Entry{Rank: 1, Member: "a", Score: 2}
	marks := st.Observe([]Entry{up, down}, t0.Add(time.Second))
	if marks["b"].Kind != MoveUp || marks["a"].Kind != MoveDown {
		t.Fatalf("after overtake: %v", marks)
	}
	if marks := st.Observe([]Entry{up, down}, t0.Add(time.Second+MarkFor/2)); len(marks) != 2 {
		t.Fatalf("marks gone too soon: %v", marks)
	}
	if marks := st.Observe([]Entry{up, down}, t0.Add(2*time.Second+MarkFor)); len(marks) != 0 {
		t.Fatalf("marks kept past MarkFor: %v", marks)
	}
	if n := st.Activity().PerMinute(t0.Add(time.Minute))[58]; n != 1 {
		t.Fatalf("activity in the minute of the overtake = %d, want 1 (b's score changed)", n)
	}
}

// A window nobody has read for ForgetAfter is forgotten, with its
// activity; one still read is kept however old it is; counting starts
// at the first read.
func TestTrackerForgetsUnwatched(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	now := t0
	s := Tracker{Now: func() time.Time { return now }}
	idle, busy := WindowID{Conn: "c", Key: "idle"}, WindowID{Conn: "c", Key: "busy"}
	s.Get(idle).Observe(nil, now)
	b := s.Get(busy)
	b.Observe([]Entry{}, now)
	if got := b.Activity().Since(); !got.Equal(t0) {
		t.Fatalf("since = %v, want the first read %v", got, t0)
	}
	now = t0.Add(ForgetAfter - time.Minute)
	b.Observe([]Entry{{Member: "x", Score: 1}}, now)
	now = t0.Add(ForgetAfter + time.Minute)
	s.Get(WindowID{Conn: "c", Key: "other"})
	if s.Peek(idle) != nil {
		t.Fatal("a window unread for over ForgetAfter is still tracked")
	}
	if s.Peek(busy) != b || !b.Activity().Since().Equal(t0) {
		t.Fatal("a window still read was forgotten or restarted")
	}
}
