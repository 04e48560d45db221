// Package clock is the time the workers run on: the wall clock in Keydeck,
// a fake one in tests, which advance it instead of sleeping.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	Since(t time.Time) time.Duration
	NewTimer(d time.Duration) Timer
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine (Real) or from Advance (Fake)
	// once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a time.Timer of a Clock.
type Timer interface {
	C() <-chan time.Time // nil for AfterFunc timers
	Stop() bool
	Reset(d time.Duration) bool
}

// Ticker is a time.Ticker of a Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	Reset(d time.Duration)
}

// Or is c, or the real clock when c is nil: a zero option means real time.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Sleep waits d on c, or until ctx ends; it says whether d passed.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// Real is the wall clock.
type Real struct{}

func (Real) Now() time.Time                            { return time.Now() }
func (Real) Since(t time.Time) time.Duration           { return time.Since(t) }
func (Real) NewTimer(d time.Duration) Timer            { return realTimer{time.NewTimer(d)} }
func (Real) NewTicker(d time.Duration) Ticker          { return realTicker{time.NewTicker(d)} }
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }
