package people

import (
	"context"
	"testing"
	"time"
)

// A reservation never released (its replica killed between reserve and
// release, a release lost to a timeout) holds its place for guessHold
// only, however busy the address stays meanwhile: each reservation
// expires on its own, not with the last one admitted.
func TestLeakedGuessReservationExpires(t *testing.T) {
	ctx := context.Background()
	l, clk := newTestLimiter(t, true)
	other := NewLoginLimiter(l.client, testPolicy, WithClock(clk.Fake)) // a replica that dies
	const addr = "203.0.113.9"
	for range testPolicy.PerPair - 1 {
		if wait, _ := other.ReserveGuess(ctx, addr); wait != 0 {
			t.Fatalf("leaked reservation refused: %v", wait)
		}
	}
	// The address keeps being admitted, one lookup at a time, for longer
	// than a reservation's hold.
	for range 2 * int(guessHold/time.Second) {
		if wait, busy := l.ReserveGuess(ctx, addr); wait != 0 {
			t.Fatalf("a lookup with %d leaked: refused %v (busy %v)", testPolicy.PerPair-1, wait, busy)
		}
		l.ReleaseGuess(ctx, addr)
		clk.Advance(time.Second)
	}
	// The leaked places are free again.
	for i := range testPolicy.PerPair {
		if wait, busy := l.ReserveGuess(ctx, addr); wait != 0 {
			t.Fatalf("lookup %d in flight, %v after the leaks: refused %v (busy %v): the leaked places never expired", i+1, 2*guessHold, wait, busy)
		}
	}
	if wait, busy := l.ReserveGuess(ctx, addr); wait == 0 || !busy {
		t.Fatalf("one more than the limit in flight: wait %v busy %v, want refused as busy", wait, busy)
	}
	for range testPolicy.PerPair {
		l.ReleaseGuess(ctx, addr)
	}
	if wait, _ := l.ReserveGuess(ctx, addr); wait != 0 {
		t.Fatalf("after releasing: refused %v", wait)
	}
}
