package search_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/search"
)

// A session steps a search slice by slice: each step runs at most
// lim.Calls SCAN calls per database, the keys found accumulate (each key
// once), and it is done when the scans reach cursor 0; further steps send
// nothing.
func TestSessionStepsToTheEnd(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	p := rs.Client(7).Pipeline()
	for i := range 1500 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	lim := search.Limits{Calls: 3, Count: 50, Cap: 5000, Time: 5 * time.Second, Total: 1 << 40}
	s := search.NewSession(c, search.Parse("bulk:*", c.Pack()), lim)
	var r search.Result
	steps := 0
	prevCalls := 0
	for !s.Done() {
		if steps++; steps > 1000 {
			t.Fatal("no end after 1000 steps")
		}
		var err error
		if r, err = s.Step(ctx); err != nil {
			t.Fatal(err)
		}
		for _, st := range r.Scans {
			if st.DB == 7 {
				if st.Calls-prevCalls > 3 {
					t.Fatalf("step %d ran %d SCAN calls in db7, at most 3", steps, st.Calls-prevCalls)
				}
				prevCalls = st.Calls
			}
		}
	}
	if steps < 2 {
		t.Fatalf("1,500 keys at 3 calls of COUNT 50 a step finished in %d step", steps)
	}
	seen := map[string]bool{}
	for _, h := range r.Hits {
		if h.DB != 7 || h.Type != "string" || seen[h.Key] {
			t.Fatalf("hit %+v (twice: %v)", h, seen[h.Key])
		}
		seen[h.Key] = true
	}
	if len(seen) != 1500 || r.Capped || r.Budget || r.Cursors() != "" {
		t.Fatalf("found %d of 1,500 keys; capped %v, budget %v, cursors %q", len(seen), r.Capped, r.Budget, r.Cursors())
	}
	before, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r2, err := s.Step(ctx); err != nil || r2.Commands != 0 || len(r2.Hits) != 1500 {
		t.Fatalf("a step after the end: %v, %d commands, %d hits", err, r2.Commands, len(r2.Hits))
	}
	if after, err := rs.CommandCalls(ctx); err != nil || after["scan"] != before["scan"] {
		t.Fatalf("a step after the end ran SCAN (%v)", err)
	}

	// The total budget ends a session before the end of the database.
	s = search.NewSession(c, search.Parse("bulk:*", c.Pack()), search.Limits{Calls: 2, Count: 50, Cap: 5000, Time: 5 * time.Second, Total: 300})
	for steps = 0; !s.Done() && steps < 100; steps++ {
		var err error
		if r, err = s.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Done() || !r.Budget || r.Scanned < 300 || r.Scanned >= 400 || len(r.Hits) >= 1500 || r.Cursors() == "" {
		t.Fatalf("budget %v, scanned %d, hits %d, cursors %q", r.Budget, r.Scanned, len(r.Hits), r.Cursors())
	}
}
