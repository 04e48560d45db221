package handlers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// Pages of things that do not exist answer 404, say what is missing and
// link back; on real Redis and on the embedded demo alike.
func TestMissingThingsAre404(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	d, err := demo.Start(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	dc := d.Connections()[0] // eisland
	for _, fx := range []struct {
		name string
		f    *console
	}{
		{"main", newFixture(t, false)},
		{dc.Name, startConsole(t, rs, server.Config{Demo: true, Conns: []redisview.ConnConfig{{Name: dc.Name, URL: dc.URL}}, PackFor: map[string]string{dc.Name: "eisland"}}, nil).up(t)},
	} {
		c := fx.name
		over := `href="/c/` + c + `"`
		for _, tt := range []struct {
			path, back string
			contains   []string
		}{
			{"/c/" + c + "/db/99", over, []string{"No such database", "has no database 99", "(db0 to db15)"}},
			{"/c/" + c + "/db/200", over, []string{"No such database", "has no database 200"}},
			{route.KeyPath(c, 99) + "?k=x", over, []string{"No such database"}},
			// No live view (nor sweeper) of a database the server lacks.
			{route.LiveURL("dbstats:" + c + ":99"), `href="/"`, []string{"has no database 99"}},
			{route.KeyURL(c, 3, "nope"), `href="/c/` + c + `/db/3"`, []string{"No such key", "There is no key “nope” in db3 of " + c, "expired or was deleted"}},
			// A family whose keys must expire: it has most likely expired.
			{route.KeyURL(c, 4, "verify:slider:challenge:abc"), `href="/c/` + c + `/db/4"`, []string{"No such key", "has most likely expired"}},
			{route.Window{Conn: c, DB: 14, Key: "mg:score:leaderboard:9999", N: 25}.URL(), `href="/c/` + c + `/db/14"`, []string{"No such key", "There is no leaderboard “mg:score:leaderboard:9999”"}},
		} {
			code, _, body := get(t, fx.f.srv.URL+tt.path)
			if code != http.StatusNotFound {
				t.Fatalf("%s: status %d, want 404; %.300s", tt.path, code, body)
			}
			for _, s := range append(tt.contains, tt.back, `data-testid="error-page"`) {
				if !strings.Contains(body, s) {
					t.Errorf("%s lacks %q", tt.path, s)
				}
			}
		}
		if c == "main" {
			fx.f.redis.Client(3).Set(context.Background(), "hello", "world", 0)
			if code, _, _ := get(t, fx.f.srv.URL+route.KeyURL(c, 3, "hello")); code != http.StatusOK {
				t.Fatalf("an existing key's page: %d", code)
			}
		}
		for _, p := range []string{"/c/" + c + "/db/15", "/c/" + c + "/db/3"} {
			if code, _, body := get(t, fx.f.srv.URL+p); code != http.StatusOK {
				t.Fatalf("%s: status %d; %.300s", p, code, body)
			}
		}
	}
}

// While the connection is down, a database page says since when and makes
// no statement about data it could not read.
func TestDatabasePageWhileDisconnected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	code, _, body := get(t, f.srv.URL+"/c/main/db/5")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if !strings.Contains(body, `data-testid="disconnected"`) || !strings.Contains(body, "disconnected since") {
		t.Fatalf("the page does not say it is disconnected: %.2000s", body)
	}
	for _, claim := range []string{"Every classified key obeys its pack", "None: the pack explains every key seen", "No key of this database matches a family of the pack"} {
		if strings.Contains(body, claim) {
			t.Errorf("the page claims %q while nothing was read", claim)
		}
	}
	if !strings.Contains(body, `data-testid="violation-count">—<`) {
		t.Error("the violation count is not '—' while nothing was read")
	}
	code, _, body = get(t, f.srv.URL+route.KeyURL("main", 5, "k"))
	if code != http.StatusBadGateway || !strings.Contains(body, "disconnected since") {
		t.Fatalf("key page while down: %d %.500s", code, body)
	}
}
