package handlers_test

import (
	"encoding/json"

	"github.com/redis/go-redis/v9"

	"net/http"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// consoleOnTwoServers is an open console whose connection "main" is on its
// own redis-server, the audit log on another: stopping main leaves the
// audit up, and the other way round.
func consoleOnTwoServers(t *testing.T) (f *console, main, audit *redistest.Server) {
	t.Helper()
	audit, main = redistest.Start(t), redistest.Start(t)
	f = startConsole(t, audit, server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: main.URL(0)}},
		PackFor: map[string]string{"main": "eisland"}}, nil).up(t)
	return f, main, audit
}

// With the connection's Redis down, every read that must ask it and every
// preview is a 502 problem (Redis could not be reached), never a 500 nor a
// "not found": the leaderboard answered 500 "Something went wrong".
func TestAPIRedisDownIs502(t *testing.T) {
	t.Parallel()
	f, main, _ := consoleOnTwoServers(t)
	c := newAPIClient(t, f)
	main.Client(0).ZAdd(t.Context(), "lb", redisZ(1, "a"))
	main.Stop()
	for _, path := range []string{
		"/api/v1/connections/main/db/0/key?key=lb",
		"/api/v1/connections/main/db/0/leaderboard?key=lb",
		"/api/v1/connections/main/user?name=x",
		"/api/v1/connections/main/search?q=x",
	} {
		problemOf(t, c, http.MethodGet, path, nil, http.StatusBadGateway)
	}
	problemOf(t, c, http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": "lb"}, http.StatusBadGateway)
}

// With the audit Redis down, an action's execution is refused 503 (the
// audit log is unavailable, so nothing was changed) and the key stays.
func TestAPIAuditDownIs503(t *testing.T) {
	t.Parallel()
	f, main, audit := consoleOnTwoServers(t)
	c := newAPIClient(t, f)
	main.Client(0).Set(t.Context(), "doomed", "v", 0)
	var pv struct {
		Token string `json:"token"`
	}
	if code, body := c.do(http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": "doomed"}); code != http.StatusOK {
		t.Fatalf("preview: %d %s", code, body)
	} else if err := jsonUnmarshal(body, &pv); err != nil || pv.Token == "" {
		t.Fatalf("preview: %v %s", err, body)
	}
	audit.Stop()
	p := problemOf(t, c, http.MethodPost, "/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusServiceUnavailable)
	if n, _ := main.Client(0).Exists(t.Context(), "doomed").Result(); n != 1 {
		t.Fatalf("the key was deleted without an audit record (%+v)", p)
	}
}

// A key changed between its preview and the execution is a 409 problem,
// and is not touched.
func TestAPIChangedSincePreviewIs409(t *testing.T) {
	t.Parallel()
	f, main, _ := consoleOnTwoServers(t)
	c := newAPIClient(t, f)
	main.Client(0).Set(t.Context(), "moving", "v1", 0)
	var pv struct {
		Token string `json:"token"`
	}
	if code, body := c.do(http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": "moving"}); code != http.StatusOK {
		t.Fatalf("preview: %d %s", code, body)
	} else if err := jsonUnmarshal(body, &pv); err != nil || pv.Token == "" {
		t.Fatalf("preview: %v %s", err, body)
	}
	main.Client(0).Set(t.Context(), "moving", "v2 — changed", 0)
	problemOf(t, c, http.MethodPost, "/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusConflict)
	if v, _ := main.Client(0).Get(t.Context(), "moving").Result(); v != "v2 — changed" {
		t.Fatalf("the changed key was touched: %q", v)
	}
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
