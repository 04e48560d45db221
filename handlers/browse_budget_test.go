package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
)

// The key lists (the API's and the keys page) draw their SCAN calls from
// the connection's scan budget, as searches do: at 1 key/s, eight
// parallel lists of one identity together run a few SCAN calls, not each
// its whole walk (more requests buy no more scanning).
func TestKeyListsDrawFromTheScanBudget(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{SearchRate: 1}, nil).up(t)
	ctx := context.Background()
	p := rs.Client(0).Pipeline()
	for i := range 5000 {
		p.Set(ctx, fmt.Sprintf("aa:%05d", i), 1, 0)
	}
	p.Set(ctx, "zz:one", 1, 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before, _ := rs.CommandCalls(ctx)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/api/v1/connections/main/db/0/keys?prefix=zz%3A"
			if i%2 == 1 {
				path = route.PrefixKeysURL("main", 0, "zz:")
			}
			code, _, _ := get(t, f.srv.URL+path)
			if code != http.StatusOK {
				t.Errorf("%s: %d", path, code)
			}
		}()
	}
	wg.Wait()
	after, _ := rs.CommandCalls(ctx)
	if n := after["scan"] - before["scan"]; n > 4 {
		t.Errorf("a budget of 1 key/s let 8 parallel key lists run %d SCAN calls", n)
	}
}
