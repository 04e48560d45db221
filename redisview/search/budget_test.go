package search_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/search"
)

// allowance is a scan budget that grants left keys, then makes every take
// wait until its ctx ends.
type allowance struct {
	mu    sync.Mutex
	left  int64
	asked []int64
}

func (a *allowance) Take(ctx context.Context, keys int64) error {
	a.mu.Lock()
	a.asked = append(a.asked, keys)
	if a.left >= keys {
		a.left -= keys
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (a *allowance) give(keys int64) {
	a.mu.Lock()
	a.left += keys
	a.mu.Unlock()
}

// A session draws COUNT keys from its scan budget before each SCAN call:
// when the budget has none left the step stops, says it is waiting for
// budget, keeps its cursors, and the next step goes on from there.
func TestSessionWaitsForScanBudget(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	p := rs.Client(7).Pipeline()
	for i := range 1500 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	b := &allowance{left: 100} // two SCAN calls of COUNT 50
	lim := search.Limits{Calls: 10, Count: 50, Cap: 5000, Time: 300 * time.Millisecond, Total: 1 << 40, Budget: b}
	s := search.NewSession(c, search.Parse("bulk:*", c.Pack()), lim)
	before, _ := rs.CommandCalls(ctx)
	r, err := s.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := rs.CommandCalls(ctx)
	if n := after["scan"] - before["scan"]; n != 2 {
		t.Errorf("a step with budget for 2 SCAN calls of COUNT 50 ran %d", n)
	}
	if !r.Waiting || r.TimedOut || s.Done() || r.Cursors() == "" {
		t.Errorf("after the budget ran out: waiting %v, timed out %v, done %v, cursors %q; want waiting, the scans to go on", r.Waiting, r.TimedOut, s.Done(), r.Cursors())
	}
	for _, k := range b.asked {
		if k != 50 {
			t.Fatalf("took %v keys per call; want COUNT (50) each", b.asked)
		}
	}
	b.give(1 << 40)
	for steps := 0; !s.Done(); steps++ {
		if steps > 100 {
			t.Fatal("no end after 100 steps")
		}
		if r, err = s.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r.Waiting || len(r.Hits) != 1500 {
		t.Errorf("with budget again: waiting %v, %d of 1,500 keys found", r.Waiting, len(r.Hits))
	}
}

// The user page's scans draw from the budget too: with none left, a read
// scans nothing, says it waits, and keeps every scan to continue.
func TestUserScansWaitForScanBudget(t *testing.T) {
	rs, c := userConn(t)
	ctx := context.Background()
	userKeys(t, rs, "ann", "ann@x.io", "EI1")
	b := &allowance{}
	lim := search.DefaultUserLimits
	lim.Budget, lim.Wait = b, 50*time.Millisecond
	before, _ := rs.CommandCalls(ctx)
	r, err := search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: "ann"}, Boards: boards(c), Scan: true, Reprobe: true}, lim)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := rs.CommandCalls(ctx)
	if n := after["scan"] - before["scan"]; n != 0 {
		t.Errorf("a read with no scan budget ran %d SCAN calls", n)
	}
	if !r.Waiting || len(r.Scans) == 0 || len(r.Cursors()) != len(r.Scans) {
		t.Fatalf("waiting %v, %d scans, cursors %v; want waiting and every scan left to continue", r.Waiting, len(r.Scans), r.Cursors())
	}
	b.give(1 << 40)
	r, err = search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: "ann"}, Boards: boards(c), Scan: true, Reprobe: true, Cursors: r.Cursors()}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if r.Waiting || r.Cursors() != nil {
		t.Errorf("with budget: waiting %v, cursors %v; want the scans finished", r.Waiting, r.Cursors())
	}
}
