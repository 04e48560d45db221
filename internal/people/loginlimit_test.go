package people

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

var testPolicy = LoginPolicy{PerPair: 5, PerAddr: 20, Window: 15 * time.Minute,
	SlowAfter: 5, SlowStep: 250 * time.Millisecond, SlowCap: 3 * time.Second}

func TestLoginPolicySlowDown(t *testing.T) {
	tests := []struct {
		n    int
		want time.Duration
	}{
		{0, 0}, {1, 0}, {5, 0},
		{6, 250 * time.Millisecond}, {7, 500 * time.Millisecond}, {8, time.Second}, {9, 2 * time.Second},
		{10, 3 * time.Second}, {11, 3 * time.Second}, {1000, 3 * time.Second},
	}
	for _, tt := range tests {
		if got := testPolicy.slowDown(tt.n); got != tt.want {
			t.Errorf("slowDown(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestLoginPolicyDecide(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	left := 10 * time.Minute
	tests := []struct {
		name string
		c    counts
		want Verdict
	}{
		{"first", counts{pair: 1, addr: 1, acct: 1, pairLeft: left, addrLeft: left}, Verdict{PairUntil: now.Add(left), AddrUntil: now.Add(left)}},
		{"the pair's last", counts{pair: 5, addr: 5, acct: 5, pairLeft: left, addrLeft: left},
			Verdict{LastForPair: true, PairUntil: now.Add(left), AddrUntil: now.Add(left)}},
		{"pair over: refused for its window", counts{pair: 6, addr: 6, pairLeft: left, addrLeft: time.Minute}, Verdict{Wait: left}},
		{"address over: refused for its window", counts{pair: 1, addr: 21, pairLeft: left, addrLeft: 2 * time.Minute}, Verdict{Wait: 2 * time.Minute}},
		{"refused at least a second", counts{pair: 6, addr: 6, pairLeft: time.Millisecond, addrLeft: time.Millisecond}, Verdict{Wait: time.Second}},
		{"the address's last", counts{pair: 1, addr: 20, acct: 1, pairLeft: left, addrLeft: time.Minute},
			Verdict{LastForAddr: true, PairUntil: now.Add(left), AddrUntil: now.Add(time.Minute)}},
		{"account busy from many addresses: slowed until its slot, not refused", counts{pair: 1, addr: 1, acct: 9, pairLeft: left, addrLeft: left, slot: 2 * time.Second},
			Verdict{Delay: 2 * time.Second, PairUntil: now.Add(left), AddrUntil: now.Add(left)}},
		{"the account's queue is full: busy, not locked out", counts{busy: 300 * time.Millisecond}, Verdict{Busy: true, Wait: time.Second}},
		{"busy, told when there is room", counts{busy: 4 * time.Second}, Verdict{Busy: true, Wait: 4 * time.Second}},
	}
	for _, tt := range tests {
		if got := testPolicy.decide(tt.c, now); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// testClock is the limiter's clock in tests: a clock.Fake that moves on
// by itself to each delay the limiter waits (recording it), so a slowed
// attempt returns at once.
type testClock struct {
	*clock.Fake
	mu    sync.Mutex
	slept []time.Duration
}

func (c *testClock) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.slept)
}

func newTestLimiter(t *testing.T, withRedis bool) (*LoginLimiter, *testClock) {
	t.Helper()
	clk := &testClock{Fake: clock.NewFake(time.Now())}
	var client *redis.Client
	if withRedis {
		client = redistest.Start(t).Client(15)
	}
	l := NewLoginLimiter(client, testPolicy, WithClock(clk.Fake))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for clk.BlockUntil(ctx, 1) == nil {
			if d := clk.Deadlines(); len(d) > 0 {
				clk.mu.Lock()
				clk.slept = append(clk.slept, d[0])
				clk.mu.Unlock()
				clk.Advance(d[0])
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return l, clk
}

// The limiter's behaviour, the same whether it counts in Redis or (Redis
// unreachable) in this process.
func TestLoginLimiter(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			l, clk := newTestLimiter(t, store == "redis")
			// Five guesses from mallory's address; the sixth is refused.
			for i := range 5 {
				if v := l.Attempt(ctx, "ada", "203.0.113.66"); v.Wait != 0 || v.LastForPair != (i == 4) {
					t.Fatalf("guess %d: %+v", i+1, v)
				}
			}
			if v := l.Attempt(ctx, "ada", "203.0.113.66"); v.Wait <= 0 {
				t.Fatalf("sixth guess admitted: %+v", v)
			}
			// Another account from that address, and ada from hers, go on.
			if v := l.Attempt(ctx, "bob", "203.0.113.66"); v.Wait != 0 {
				t.Fatalf("bob from mallory's address: %+v", v)
			}
			if v := l.Attempt(ctx, "ada", "198.51.100.7"); v.Wait != 0 || v.Delay != 250*time.Millisecond {
				t.Fatalf("ada from her address (6th attempt on ada): %+v, want admitted after 250ms", v)
			}
			if slept := clk.sleeps(); len(slept) != 1 || slept[0] != 250*time.Millisecond {
				t.Fatalf("slept %v", slept)
			}
			list, total, err := l.Lockouts(ctx, 10)
			if (err != nil) != (store == "memory") || total != 1 || len(list) != 1 || list[0].User != "ada" || list[0].Addr != "203.0.113.66" {
				t.Fatalf("lock-outs: %+v %d %v", list, total, err)
			}
			// A success forgets ada's slow-down, not mallory's lock-out.
			l.Succeeded(ctx, "ada", "198.51.100.7")
			if v := l.Attempt(ctx, "ada", "198.51.100.7"); v.Wait != 0 || v.Delay != 0 {
				t.Fatalf("after a success: %+v", v)
			}
			if v := l.Attempt(ctx, "ada", "203.0.113.66"); v.Wait <= 0 {
				t.Fatalf("mallory's lock-out ended by ada's success: %+v", v)
			}
			// Cleared by an admin: gone from the list, and the address may try.
			if err := l.Clear(ctx, "ada", "203.0.113.66"); err != nil {
				t.Fatal(err)
			}
			if list, total, _ := l.Lockouts(ctx, 10); total != 0 || len(list) != 0 {
				t.Fatalf("after clearing: %+v %d", list, total)
			}
			if v := l.Attempt(ctx, "ada", "203.0.113.66"); v.Wait != 0 {
				t.Fatalf("cleared address refused: %+v", v)
			}
			// The address limit, across accounts.
			for i := range 30 {
				l.Attempt(ctx, "user"+string(rune('a'+i)), "192.0.2.9")
			}
			list, _, _ = l.Lockouts(ctx, 10)
			found := false
			for _, lo := range list {
				found = found || (lo.Addr == "192.0.2.9" && lo.User == "")
			}
			if !found {
				t.Fatalf("address lock-out not listed: %+v", list)
			}
			if err := l.Clear(ctx, "", "192.0.2.9"); err != nil {
				t.Fatal(err)
			}
			if v := l.Attempt(ctx, "zed", "192.0.2.9"); v.Wait != 0 {
				t.Fatalf("cleared address still limited: %+v", v)
			}
		})
	}
}

// In memory (where the clock is the limiter's), a window ends on time.
func TestLoginLimiterWindowEnds(t *testing.T) {
	ctx := context.Background()
	l, clk := newTestLimiter(t, false)
	for range 6 {
		l.Attempt(ctx, "ada", "203.0.113.66")
	}
	clk.Advance(testPolicy.Window - time.Second)
	if v := l.Attempt(ctx, "ada", "203.0.113.66"); v.Wait <= 0 || v.Wait > 2*time.Second {
		t.Fatalf("a second before the end: %+v", v)
	}
	if list, _, _ := l.Lockouts(ctx, 10); len(list) != 1 {
		t.Fatalf("listed: %+v", list)
	}
	clk.Advance(time.Second)
	if list, _, _ := l.Lockouts(ctx, 10); len(list) != 0 {
		t.Fatalf("listed after its end: %+v", list)
	}
	if v := l.Attempt(ctx, "ada", "203.0.113.66"); v.Wait != 0 {
		t.Fatalf("after the window: %+v", v)
	}
}

// However many addresses guess at an account, its owner from another
// address is slowed by at most SlowCap, never refused.
func TestLoginLimiterNeverLocksTheOwnerOut(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			l, clk := newTestLimiter(t, store == "redis")
			for a := range 10 {
				for range 6 {
					l.Attempt(ctx, "ada", "203.0.113."+string(rune('0'+a)))
				}
			}
			for _, d := range clk.sleeps() {
				if d > testPolicy.SlowCap {
					t.Fatalf("slept %v, over the cap", d)
				}
			}
			if v := l.Attempt(ctx, "ada", "198.51.100.7"); v.Wait != 0 || v.Delay != testPolicy.SlowCap {
				t.Fatalf("the owner after 60 guesses from 10 addresses: %+v, want admitted after %v", v, testPolicy.SlowCap)
			}
		})
	}
}

// parallelAttempts makes n attempts on ada at once, each from an address
// of its own, with the clock standing still; it returns the delays of the
// admitted ones and how many were refused because the account is busy.
func parallelAttempts(t *testing.T, l *LoginLimiter, n int) (delays []time.Duration, busy int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := l.Attempt(context.Background(), "ada", fmt.Sprintf("203.0.113.%d", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case v.Busy:
				busy++
			case v.Wait > 0:
				t.Errorf("attempt from a fresh address locked out: %+v", v)
			default:
				delays = append(delays, v.Delay)
			}
		}()
	}
	wg.Wait()
	slices.Sort(delays)
	return delays, busy
}

// Parallel guesses at one account from many addresses queue for it: each
// attempt past the slow-down threshold takes the account's next time slot,
// so 40 at once are released one step apart, not all after one delay.
func TestLoginLimiterParallelAttemptsQueue(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			l, clk := newTestLimiter(t, store == "redis")
			const step = 100 * time.Millisecond
			l.policy = LoginPolicy{PerPair: 5, PerAddr: 20, Window: 15 * time.Minute, SlowAfter: 5, SlowStep: step, SlowCap: step, SlowQueue: 10 * time.Second}
			l.sleep = func(context.Context, time.Duration) {} // the clock stands still: all 40 arrive at once
			delays, busy := parallelAttempts(t, l, 40)
			if busy != 0 || len(delays) != 40 {
				t.Fatalf("%d admitted, %d refused as busy; want all 40 admitted (the queue is 3.5 s, under its 10 s bound)", len(delays), busy)
			}
			if spread := delays[39] - delays[0]; spread < 35*step {
				t.Fatalf("release times spread over %v, want at least %v (35 × %v): %v", spread, 35*step, step, delays)
			}
			for i := 6; i < 40; i++ {
				if delays[i]-delays[i-1] < step {
					t.Fatalf("attempts %d and %d released %v apart, want at least %v: %v", i, i+1, delays[i]-delays[i-1], step, delays)
				}
			}
			_ = clk
		})
	}
}

// Past the queue's bound an attempt is refused as busy (not locked out,
// and not counted), so no one waits more than SlowQueue.
func TestLoginLimiterQueueIsBounded(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			l, _ := newTestLimiter(t, store == "redis")
			const step = time.Second
			l.policy = LoginPolicy{PerPair: 5, PerAddr: 20, Window: 15 * time.Minute, SlowAfter: 5, SlowStep: step, SlowCap: step, SlowQueue: 10 * time.Second}
			l.sleep = func(context.Context, time.Duration) {}
			delays, busy := parallelAttempts(t, l, 40)
			if len(delays) != 15 || busy != 25 {
				t.Fatalf("%d admitted, %d busy; want 15 admitted (5 free, 10 one second apart) and 25 busy", len(delays), busy)
			}
			if delays[14] > 10*time.Second {
				t.Fatalf("an attempt waits %v, over the 10 s bound", delays[14])
			}
			v := l.Attempt(context.Background(), "ada", "198.51.100.7")
			if !v.Busy || v.Wait <= 0 || v.Wait > 11*time.Second {
				t.Fatalf("the owner while the queue is full: %+v, want busy with a Retry-After", v)
			}
		})
	}
}

// A success whose address count expired meanwhile leaves no counter
// behind: DECR on a missing key would make a -1 that never expires.
func TestSucceededAfterExpiryLeavesNoCounter(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	l := NewLoginLimiter(rs.Client(15), testPolicy)
	l.Attempt(ctx, "ada", "198.51.100.7")
	_, ad, _, _ := l.keys("ada", "198.51.100.7")
	rs.Client(15).Del(ctx, ad) // its window ended
	l.Succeeded(ctx, "ada", "198.51.100.7")
	if n := rs.Client(15).Exists(ctx, ad).Val(); n != 0 {
		v, _ := rs.Client(15).Get(ctx, ad).Result()
		ttl := rs.Client(15).PTTL(ctx, ad).Val()
		t.Fatalf("after the success the address counter is back: %q, TTL %v", v, ttl)
	}
}

// An address whose count reached the limit on an attempt that then
// succeeded is not locked out, and is not listed as if it were.
func TestSuccessAtTheAddressLimitListsNoLockout(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			l, _ := newTestLimiter(t, store == "redis")
			for i := range testPolicy.PerAddr - 1 {
				if v := l.Attempt(ctx, fmt.Sprintf("user%d", i), "192.0.2.9"); v.Wait != 0 {
					t.Fatalf("failure %d refused: %+v", i+1, v)
				}
			}
			if v := l.Attempt(ctx, "ada", "192.0.2.9"); v.Wait != 0 || !v.LastForAddr {
				t.Fatalf("the 20th attempt: %+v, want admitted as the address's last", v)
			}
			l.Succeeded(ctx, "ada", "192.0.2.9")
			if list, total, _ := l.Lockouts(ctx, 10); total != 0 || len(list) != 0 {
				t.Fatalf("after 19 failures and a success: lock-outs %+v (%d), want none", list, total)
			}
			if v := l.Attempt(ctx, "bob", "192.0.2.9"); v.Wait != 0 {
				t.Fatalf("the address after its success: %+v", v)
			}
		})
	}
}

// Locked reads a lock-out without counting: asking never locks anyone.
func TestLoginLimiterLockedCountsNothing(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			l, _ := newTestLimiter(t, store == "redis")
			for range 100 {
				if w := l.Locked(ctx, TokenGuesses, "203.0.113.66"); w != 0 {
					t.Fatalf("locked after only asking: %v", w)
				}
			}
			for range testPolicy.PerPair {
				l.Attempt(ctx, TokenGuesses, "203.0.113.66")
			}
			if w := l.Locked(ctx, TokenGuesses, "203.0.113.66"); w <= 0 || w > testPolicy.Window {
				t.Fatalf("after %d failures: locked %v", testPolicy.PerPair, w)
			}
			if w := l.Locked(ctx, "ada", "203.0.113.66"); w != 0 {
				t.Fatalf("the address is locked out of ada's account too: %v", w)
			}
			if w := l.Locked(ctx, TokenGuesses, "198.51.100.7"); w != 0 {
				t.Fatalf("another address: %v", w)
			}
		})
	}
}
