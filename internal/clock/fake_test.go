package clock

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestFakeFiresDueTimersInOrder(t *testing.T) {
	f := NewFake(time.Time{})
	start := f.Now()
	var got []string
	at := map[string]time.Duration{}
	for _, c := range []struct {
		name string
		d    time.Duration
	}{{"c", 3 * time.Second}, {"a", time.Second}, {"b", 2 * time.Second}, {"late", time.Minute}} {
		f.AfterFunc(c.d, func() { got = append(got, c.name); at[c.name] = f.Since(start) })
	}
	f.Advance(2500 * time.Millisecond)
	if !slices.Equal(got, []string{"a", "b"}) || at["a"] != time.Second || at["b"] != 2*time.Second {
		t.Fatalf("after 2.5 s: %v at %v", got, at)
	}
	if f.Since(start) != 2500*time.Millisecond {
		t.Fatalf("now %v after start", f.Since(start))
	}
	f.Advance(time.Second)
	if !slices.Equal(got, []string{"a", "b", "c"}) || f.Waiters() != 1 {
		t.Fatalf("after 3.5 s: %v, %d waiting", got, f.Waiters())
	}
}

func TestFakeTimerStopResetAndTicker(t *testing.T) {
	f := NewFake(time.Time{})
	tm := f.NewTimer(time.Second)
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop of an armed timer says true once")
	}
	f.Advance(2 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	tm.Reset(time.Second)
	f.Advance(time.Second)
	select {
	case <-tm.C():
	default:
		t.Fatal("a reset timer did not fire")
	}

	tk := f.NewTicker(time.Second)
	n := 0
	for range 3 {
		f.Advance(time.Second)
		select {
		case <-tk.C():
			n++
		default:
		}
	}
	f.Advance(5 * time.Second) // unread ticks are dropped, as time.Ticker does
	tk.Stop()                  // drops the unread tick too, as a real ticker does (Go 1.23 on)
	f.Advance(5 * time.Second)
	select {
	case <-tk.C():
		t.Fatal("ticks after Stop")
	default:
	}
	if n != 3 || f.Waiters() != 0 {
		t.Fatalf("ticks %d, waiters %d", n, f.Waiters())
	}
}

func TestFakeBlockUntilAndSleep(t *testing.T) {
	f := NewFake(time.Time{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan bool)
	go func() { done <- Sleep(ctx, f, time.Minute) }()
	if err := f.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if d := f.Deadlines(); len(d) != 1 || d[0] != time.Minute {
		t.Fatalf("deadlines %v", d)
	}
	f.Advance(59 * time.Second)
	select {
	case <-done:
		t.Fatal("woke early")
	default:
	}
	f.Advance(time.Second)
	if !<-done {
		t.Fatal("Sleep said the context ended")
	}

	short, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if err := f.BlockUntil(short, 1); err == nil {
		t.Fatal("BlockUntil returned with nothing waiting")
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if Sleep(cctx, f, time.Second) {
		t.Fatal("Sleep on an ended context said the time passed")
	}
}

func TestRealSleep(t *testing.T) {
	if !Sleep(context.Background(), Or(nil), time.Millisecond) {
		t.Fatal("real Sleep")
	}
}

// Like a real timer since Go 1.23, a fake timer or ticker that is stopped
// or reset drops a tick it delivered and nobody received: a loop that
// resets its ticker after other work does not see a stale tick at once.
func TestFakeStopAndResetDropAnUnreceivedTick(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tk := f.NewTicker(time.Second)
	f.Advance(time.Second)
	tk.Reset(time.Second)
	select {
	case <-tk.C():
		t.Fatal("a ticker reset still delivers the tick from before")
	default:
	}
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second)
	tm.Stop()
	select {
	case <-tm.C():
		t.Fatal("a stopped timer still delivers its tick")
	default:
	}
	tm.Reset(time.Second)
	f.Advance(time.Second)
	select {
	case <-tm.C():
	default:
		t.Fatal("a timer reset after stop does not fire")
	}
}
