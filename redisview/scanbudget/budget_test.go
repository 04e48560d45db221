package scanbudget

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

// newFakeClock is the clock the budget's tests advance: timers run in
// the advancing goroutine, each at its own time.
func newFakeClock() *clock.Fake { return clock.NewFake(time.Unix(1_700_000_000, 0)) }

// search is one live search in the simulation: it asks for count keys
// again as soon as it was granted them.
type search struct {
	id    string
	w     *waiter
	got   int64
	calls int
}

// simulate runs searches against b for d in steps of 10 ms, each search
// taking count keys per SCAN call in a closed loop. events run at their
// time (from the start) before that step's grants are counted.
func simulate(b *Budget, c *clock.Fake, ss []*search, count int64, d time.Duration, events map[time.Duration]func()) {
	ask := func(s *search) {
		b.mu.Lock()
		s.w = b.enqueue(s.id, count)
		b.dispatch()
		b.mu.Unlock()
	}
	for _, s := range ss {
		if s.w == nil {
			ask(s)
		}
	}
	const step = 10 * time.Millisecond
	for t := time.Duration(0); t < d; t += step {
		if ev := events[t]; ev != nil {
			ev()
		}
		c.Advance(step)
		// Searches granted go again; several rounds, since a grant may
		// leave tokens for the next.
		for again := true; again; {
			again = false
			for _, s := range ss {
				if s.w == nil {
					continue
				}
				b.mu.Lock()
				g := s.w.granted
				b.mu.Unlock()
				if g {
					s.got += s.w.keys
					s.calls++
					ask(s)
					again = true
				}
			}
		}
	}
}

func searches(id string, n int) []*search {
	var out []*search
	for i := 0; i < n; i++ {
		out = append(out, &search{id: id})
	}
	return out
}

func byID(ss []*search) map[string]int64 {
	out := map[string]int64{}
	for _, s := range ss {
		out[s.id] += s.got
	}
	return out
}

// TestBudgetSharesFairlyPerIdentity: the whole budget holds whatever the
// number of searches, and it is split per identity, not per search.
func TestBudgetSharesFairlyPerIdentity(t *testing.T) {
	const rate, count = 1600, 200
	const d = 20 * time.Second
	total := int64(rate * d.Seconds())
	cases := []struct {
		name   string
		ids    map[string]int // identity → searches
		wantID map[string]float64
	}{
		{"one search", map[string]int{"alice": 1}, map[string]float64{"alice": 1}},
		{"one identity, 64 searches", map[string]int{"alice": 64}, map[string]float64{"alice": 1}},
		{"64 searches against 1", map[string]int{"alice": 64, "bob": 1}, map[string]float64{"alice": 0.5, "bob": 0.5}},
		{"8 identities × 8 searches", map[string]int{"u0": 8, "u1": 8, "u2": 8, "u3": 8, "u4": 8, "u5": 8, "u6": 8, "u7": 8},
			map[string]float64{"u0": 0.125, "u1": 0.125, "u2": 0.125, "u3": 0.125, "u4": 0.125, "u5": 0.125, "u6": 0.125, "u7": 0.125}},
		{"uneven: 32, 4, 1", map[string]int{"a": 32, "b": 4, "c": 1}, map[string]float64{"a": 1.0 / 3, "b": 1.0 / 3, "c": 1.0 / 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClock()
			b := New(rate, c)
			var ss []*search
			ids := make([]string, 0, len(tc.ids))
			for id := range tc.ids {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				ss = append(ss, searches(id, tc.ids[id])...)
			}
			simulate(b, c, ss, count, d, nil)
			got := byID(ss)
			var sum int64
			for _, g := range got {
				sum += g
			}
			// The rate, plus the burst at the start, plus one call of
			// slack for the step.
			if hi := total + int64(b.burst) + count; sum > hi || sum < total-count {
				t.Errorf("granted %d keys in %s over all searches; want about %d (rate %d keys/s), at most %d", sum, d, total, rate, hi)
			}
			for id, share := range tc.wantID {
				if f := float64(got[id]) / float64(sum); f < share-0.02 || f > share+0.02 {
					t.Errorf("%s got %.3f of the budget (%d keys); want %.3f ± 0.02 (all: %v)", id, f, got[id], share, got)
				}
			}
		})
	}
}

// TestBudgetSearchesOfOneIdentityTakeTurns: an identity's searches share
// its share evenly.
func TestBudgetSearchesOfOneIdentityTakeTurns(t *testing.T) {
	c := newFakeClock()
	b := New(1600, c)
	ss := searches("alice", 4)
	simulate(b, c, ss, 200, 10*time.Second, nil)
	for i, s := range ss {
		if s.calls < 19 || s.calls > 22 {
			t.Errorf("search %d had %d SCAN calls in 10 s; want about 20 (all: %d %d %d %d)", i, s.calls, ss[0].calls, ss[1].calls, ss[2].calls, ss[3].calls)
		}
	}
}

// TestBudgetSurvivesReconnect: an identity that drops every search and
// starts them again (a reconnect: new sockets, new pollers) is neither
// reset nor put ahead; one that was idle earns no credit for it.
func TestBudgetSurvivesReconnect(t *testing.T) {
	const rate, count = 1600, 200
	cases := []struct {
		name string
		// at 10 s: what happens to alice's 64 searches
		event func(b *Budget, alice []*search) []*search
	}{
		{"keeps watching", func(*Budget, []*search) []*search { return nil }},
		{"reconnects", func(b *Budget, alice []*search) []*search {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, s := range alice {
				b.cancel("alice", s.w)
				s.w = nil
			}
			b.dispatch()
			return searches("alice", 64) // asked at once by simulate's next round
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClock()
			b := New(rate, c)
			alice, bob := searches("alice", 64), searches("bob", 1)
			ss := append(append([]*search{}, alice...), bob...)
			simulate(b, c, ss, count, 10*time.Second, nil)
			more := tc.event(b, alice)
			ss2 := append(append([]*search{}, more...), bob...)
			before := byID(ss)
			simulate(b, c, ss2, count, 10*time.Second, nil)
			after := byID(append(ss, more...))
			a, bb := after["alice"]-before["alice"], after["bob"]-before["bob"]
			if f := float64(bb) / float64(a+bb); f < 0.48 {
				t.Errorf("after alice %s, bob got %.3f of the budget (alice %d keys, bob %d); want half", tc.name, f, a, bb)
			}
		})
	}
	t.Run("idle earns nothing", func(t *testing.T) {
		c := newFakeClock()
		b := New(rate, c)
		alice := searches("alice", 8)
		simulate(b, c, alice, count, 10*time.Second, nil)
		// carol joins after alice had the budget alone for 10 s: from then
		// on they share it, carol is not paid back the 10 s.
		carol := searches("carol", 8)
		before := byID(alice)["alice"]
		simulate(b, c, append(append([]*search{}, alice...), carol...), count, 10*time.Second, nil)
		a, cr := byID(alice)["alice"]-before, byID(carol)["carol"]
		if f := float64(cr) / float64(a+cr); f < 0.48 || f > 0.52 {
			t.Errorf("carol got %.3f of the budget after joining (alice %d keys, carol %d); want half", f, a, cr)
		}
		if got := b.Stats().Granted["alice"]; got != byID(alice)["alice"] {
			t.Errorf("Stats().Granted[alice] = %d; the searches were granted %d", got, byID(alice)["alice"])
		}
	})
}

// TestBudgetTake: the blocking Take waits for its grant on the clock, and
// gives up with ctx, leaving nothing queued.
func TestBudgetTake(t *testing.T) {
	c := newFakeClock()
	b := New(800, c) // burst 200 keys
	ctx := context.Background()
	if err := b.Take(ctx, "alice", 200); err != nil {
		t.Fatalf("first take of the burst: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Take(ctx, "alice", 200) }()
	waitFor(t, func() bool { return b.Stats().Waiting["alice"] == 1 })
	select {
	case err := <-done:
		t.Fatalf("second take returned (%v) before the clock moved", err)
	default:
	}
	c.Advance(200 * time.Millisecond) // 160 keys: not yet
	select {
	case err := <-done:
		t.Fatalf("second take returned (%v) after 160 of its 200 keys", err)
	default:
	}
	c.Advance(50 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatalf("second take: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- b.Take(cctx, "bob", 200) }()
	waitFor(t, func() bool { return b.Stats().Waiting["bob"] == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a take whose ctx ended returned nil")
	}
	if st := b.Stats(); st.Identities != 0 || len(st.Waiting) != 0 {
		t.Errorf("after a cancelled take: %+v; want nothing waiting", st)
	}
	if got := b.Stats().Granted["bob"]; got != 0 {
		t.Errorf("bob was granted %d keys by a cancelled take", got)
	}

	var nilBudget *Budget
	if err := nilBudget.For("x").Take(ctx, 1<<40); err != nil {
		t.Errorf("nil budget: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, "the condition", cond)
}

func ExampleBudget() {
	b := New(1600, nil)
	err := b.For("alice").Take(context.Background(), 200)
	fmt.Println(err)
	// Output: <nil>
}

// A pacer whose step gave up waiting keeps its place: the identity that
// had been waiting longer is served first when the budget allows, not
// whoever asks again first after a pause.
func TestPacerKeepsItsPlace(t *testing.T) {
	c := newFakeClock()
	b := New(800, c) // burst 200 keys
	ctx := context.Background()
	if err := b.Take(ctx, "x", 200); err != nil { // empties the bucket
		t.Fatal(err)
	}
	alice := b.Pacer("alice")
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := alice.Take(short, 200); err == nil {
		t.Fatal("a take with an ended ctx returned nil")
	}
	if b.Stats().Waiting["alice"] != 1 {
		t.Fatalf("after its step gave up, alice does not wait: %+v", b.Stats())
	}
	bob := make(chan error, 1)
	go func() { bob <- b.Take(ctx, "bob", 200) }()
	waitFor(t, func() bool { return b.Stats().Waiting["bob"] == 1 })
	c.Advance(250 * time.Millisecond) // 200 keys: one take
	if err := alice.Take(ctx, 200); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bob:
		t.Fatal("bob, who came later, was served with alice")
	default:
	}
	if st := b.Stats(); st.Granted["alice"] != 200 || st.Granted["bob"] != 0 {
		t.Fatalf("granted %v; want alice's 200 first", st.Granted)
	}
	c.Advance(250 * time.Millisecond)
	if err := <-bob; err != nil {
		t.Fatal(err)
	}
	p := b.Pacer("carol")
	cctx, cancel2 := context.WithCancel(ctx)
	cancel2()
	_ = p.Take(cctx, 200)
	p.Close()
	if st := b.Stats(); st.Waiting["carol"] != 0 {
		t.Fatalf("a closed pacer still waits: %+v", st)
	}
}

// TestBudgetForgetsOneOffIdentities: identities that take once and go
// (one search request each) are not remembered for ever: once nobody
// waits, their accounts are no further ahead than a new one and go.
func TestBudgetForgetsOneOffIdentities(t *testing.T) {
	c := newFakeClock()
	b := New(1600, c) // burst 400 keys
	ctx := context.Background()
	for i := range 1000 {
		done := make(chan error, 1)
		go func() { done <- b.Take(ctx, fmt.Sprintf("id%d", i), 200) }()
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			default:
				c.Advance(50 * time.Millisecond)
				continue
			}
			break
		}
	}
	b.mu.Lock()
	n := len(b.ids)
	b.mu.Unlock()
	if n > maxIdle {
		t.Fatalf("after 1,000 identities took once each, the budget remembers %d of them; want at most %d", n, maxIdle)
	}
}

// TestBudgetReconnectKeepsDebt: an identity that took more than its share
// while others waited keeps that debt when all its searches go and come
// back, however many other identities come and go meanwhile.
func TestBudgetReconnectKeepsDebt(t *testing.T) {
	c := newFakeClock()
	b := New(800, c) // burst 200 keys
	ctx := context.Background()
	if err := b.Take(ctx, "x", 200); err != nil { // empties the bucket
		t.Fatal(err)
	}
	bob := b.Pacer("bob")
	alice := b.Pacer("alice")
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_ = bob.Take(ended, 200)    // bob waits first
	_ = alice.Take(ended, 2000) // alice asks for 10 bursts at once
	c.Advance(250 * time.Millisecond)
	if err := bob.Take(ctx, 200); err != nil {
		t.Fatal(err)
	}
	_ = bob.Take(ended, 200) // bob goes on searching: he waits again
	c.Advance(250 * time.Millisecond)
	if err := alice.Take(ctx, 2000); err != nil {
		t.Fatal(err)
	}
	// alice reconnects: a new search of hers asks, while bob waits and
	// 300 one-off identities ask and give up.
	for i := range 300 {
		_ = b.Take(ended, fmt.Sprintf("one-off %d", i), 100)
	}
	again := b.Pacer("alice")
	_ = again.Take(ended, 200)
	// The bucket owes 1,800 keys; from then on every grant of 200 keys
	// should go to bob until he has caught up with alice's 2,000.
	c.Advance(2500 * time.Millisecond)
	for i := range 8 {
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := bob.Take(wait, 200)
		cancel()
		if err != nil {
			t.Fatalf("bob's grant %d after alice reconnected: %v (granted %v); want bob served before alice's debt is paid", i, err, b.Stats().Granted)
		}
		_ = bob.Take(ended, 200)
		c.Advance(250 * time.Millisecond)
	}
	if st := b.Stats(); st.Granted["alice"] != 2000 || st.Granted["bob"] < 1800 {
		t.Fatalf("after alice reconnected: granted %v; want bob served before alice's debt is paid", st.Granted)
	}
}
