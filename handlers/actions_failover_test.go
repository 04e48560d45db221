package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// killAtExec is a go-redis hook that, once armed, runs kill when it sees
// a transaction's EXEC, before sending it.
type killAtExec struct {
	armed atomic.Bool
	kill  func()
}

func (h *killAtExec) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *killAtExec) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *killAtExec) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "exec" }) && h.armed.CompareAndSwap(true, false) {
			h.kill()
		}
		return next(ctx, cmds)
	}
}

// Through the API, a reset of alice's login limit (a window and its lock,
// one transaction) whose sentinel primary is killed as EXEC is sent fails
// as a 502 saying nothing was changed; after the failover the same
// confirmation runs, once.
func TestSentinelFailoverMidActionThroughTheAPI(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t)
	audit := redistest.Start(t)
	f := startConsole(t, audit, server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: s.URL(0)}},
		PackFor: map[string]string{"main": "eisland"}}, nil).up(t)
	h := &killAtExec{kill: func() { s.KillPrimary(30 * time.Second) }}
	f.reg.All()[0].AddHook(h)

	ctx := context.Background()
	const window, lock = "auth:limit:login:failures:alice", "auth:limit:login:lock:alice"
	p := s.Primary.Client(6)
	now := time.Now()
	for i := range 5 {
		ms := now.Add(time.Duration(i-5) * time.Second).UnixMilli()
		p.ZAdd(ctx, window, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, i)})
	}
	p.Expire(ctx, window, 15*time.Minute)
	p.Set(ctx, lock, strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10), 10*time.Minute)
	r := s.Replica.Client(6)
	redistest.Eventually(t, 10*time.Second, "the replica has the login keys", func() bool { return r.Exists(ctx, window, lock).Val() == 2 })

	c := newAPIClient(t, f)
	var pv struct {
		Token string `json:"token"`
	}
	if code, body := c.do(http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "reset-limit", "conn": "main", "db": 6, "key": window}); code != http.StatusOK {
		t.Fatalf("preview: %d %s", code, body)
	} else if err := jsonUnmarshal(body, &pv); err != nil || pv.Token == "" {
		t.Fatalf("preview: %v %s", err, body)
	}
	h.armed.Store(true)
	prob := problemOf(t, c, http.MethodPost, "/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusBadGateway)
	if !strings.Contains(prob.Detail, "nothing was changed") {
		t.Fatalf("problem %+v", prob)
	}
	if h.armed.Load() {
		t.Fatal("the hook never saw EXEC")
	}
	primary := redis.NewClient(&redis.Options{Addr: s.PrimaryAddr(), DB: 6})
	defer primary.Close()
	if n := primary.Exists(ctx, window, lock).Val(); n != 2 {
		t.Fatalf("half-done: %d of the two keys left on the new primary", n)
	}
	if code, body := c.do(http.MethodPost, "/api/v1/actions/execute", map[string]any{"token": pv.Token}); code != http.StatusOK {
		t.Fatalf("the confirmation again after the failover: %d %s", code, body)
	}
	if n := primary.Exists(ctx, window, lock).Val(); n != 0 {
		t.Fatalf("%d of the two keys left", n)
	}
	problemOf(t, c, http.MethodPost, "/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusBadRequest)
}
