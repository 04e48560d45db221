package handlers_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/route"
)

// requestTrips counts the round trips (a command alone, or a pipeline)
// made on a request's context: net/http puts its server in every request
// context, and the background work (sweeps, index, monitor) has none.
type requestTrips struct {
	mu sync.Mutex
	n  int
}

func (h *requestTrips) add(ctx context.Context, first string) {
	if ctx.Value(http.ServerContextKey) == nil {
		return
	}
	switch first {
	case "hello", "client", "select", "auth":
		return // a new connection's handshake
	}
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

func (h *requestTrips) take() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.n
	h.n = 0
	return n
}

func (h *requestTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *requestTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.add(ctx, cmd.Name())
		return next(ctx, cmd)
	}
}
func (h *requestTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 {
			h.add(ctx, cmds[0].Name())
		}
		return next(ctx, cmds)
	}
}

// A user page reads the keys of every database together: its derived
// keys in one pipeline per round (not one per database), and every key's
// role read batched (one pipeline per decoder step and database — the
// databases at once, each on its own client, as a least-privilege user
// may not SELECT — not one per command of each key). The user's keys span
// nine databases; it was 33 round trips one after another before.
func TestUserPageRoundTrips(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	seedUser(t, f, "ann", time.Minute)
	h := &requestTrips{}
	f.reg.All()[0].AddHook(h)
	page := f.srv.URL + route.UserURL("main", "ann")
	get(t, page) // warms the connections and the leaderboard index
	h.take()
	code, _, _ := get(t, page)
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	n := h.take()
	t.Logf("round trips of a user page load: %d", n)
	if n > 14 {
		t.Errorf("a user page load cost %d round trips, want at most 14", n)
	}
}
