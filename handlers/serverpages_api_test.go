package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
)

// The API previews, executes and undoes server actions as it does key
// actions: a request with no key.
func TestServerActionsThroughTheAPI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	rc := f.redis.Client(0)
	rc.ConfigSet(ctx, "maxmemory-samples", "5")
	c := newAPIClient(t, f)
	type preview struct {
		Summary  string
		Undoable bool
		Notes    []string
		Token    string
	}
	type outcome struct {
		AuditID string `json:"audit_id"`
		Undo    *struct {
			Conn   string
			DB     int
			Record string
		}
	}
	post := func(path string, body any, want int, v any) {
		t.Helper()
		code, out := c.do(http.MethodPost, path, body)
		if code != want {
			t.Fatalf("POST %s: %d, want %d: %s", path, code, want, out)
		}
		if v != nil {
			if err := json.Unmarshal(out, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	var pv preview
	post("/api/v1/actions/preview", map[string]any{"kind": action.KindConfigSet, "conn": "main", "db": 0,
		"args": map[string]string{"parameter": "maxmemory-samples", "value": "8"}}, http.StatusOK, &pv)
	if pv.Summary != "maxmemory-samples: 5 → 8" || !pv.Undoable {
		t.Fatalf("preview %+v", pv)
	}
	var out outcome
	post("/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusOK, &out)
	if rc.ConfigGet(ctx, "maxmemory-samples").Val()["maxmemory-samples"] != "8" || out.Undo == nil {
		t.Fatalf("execute %+v", out)
	}
	post("/api/v1/actions/undo", out.Undo, http.StatusOK, &pv)
	post("/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusOK, nil)
	if v := rc.ConfigGet(ctx, "maxmemory-samples").Val()["maxmemory-samples"]; v != "5" {
		t.Fatalf("after undo: %s", v)
	}
	post("/api/v1/actions/preview", map[string]any{"kind": action.KindConfigSet, "conn": "main", "db": 0,
		"args": map[string]string{"parameter": "requirepass", "value": "x"}}, http.StatusForbidden, nil)

	victim := redis.NewClient(&redis.Options{Addr: f.redis.Addr, ClientName: "api-victim"})
	t.Cleanup(func() { _ = victim.Close() })
	id := victim.ClientID(ctx).Val()
	post("/api/v1/actions/preview", map[string]any{"kind": action.KindKillClient, "conn": "main", "db": 0,
		"args": map[string]string{"id": itoa64(id)}}, http.StatusOK, &pv)
	if pv.Undoable || len(pv.Notes) == 0 || !strings.Contains(pv.Notes[0], "cannot be undone") {
		t.Fatalf("kill preview %+v", pv)
	}
	post("/api/v1/actions/execute", map[string]any{"token": pv.Token}, http.StatusOK, &out)
	if out.Undo != nil || out.AuditID == "" {
		t.Fatalf("kill outcome %+v", out)
	}
}
