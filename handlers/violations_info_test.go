package handlers_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

// infoCalls: INFO commands the server has run (INFO commandstats).
func infoCalls(t *testing.T, rs *redistest.Server) int {
	t.Helper()
	txt, err := rs.Client(0).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(txt, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "cmdstat_info" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if k, v, _ := strings.Cut(kv, "="); k == "calls" {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
	}
	return 0
}

// One view of the violations list reads the keyspace once — not one INFO
// keyspace per database.
func TestViolationsPageReadsKeyspaceOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	for db := range 15 {
		f.redis.Client(db).Set(ctx, "server:wallpaper-detail::1:a:"+strconv.Itoa(db), "{}", time.Hour)
	}
	u := f.srv.URL + route.ViolationsURL("main")
	// A first view starts the sweepers and the overview; the one counted
	// finds them running.
	if code, _, body := get(t, u, "Accept", "application/json"); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	n0 := infoCalls(t, f.redis)
	if code, _, body := get(t, u, "Accept", "application/json"); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	// The INFO commandstats above counts itself once.
	if d := infoCalls(t, f.redis) - n0 - 1; d > 1 {
		t.Fatalf("%d INFO commands for one view of the violations list", d)
	}
}
