package handlers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// On the embedded demo, as `go run ./cmd/web` starts it (the audit log
// on the demo's own server, database 15): a pattern's keys are deleted
// in bulk and the undo restores them, values and expiries, while the
// simulator keeps writing.
func TestBulkOnTheDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := demo.Start(ctx, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	var conns []redisview.ConnConfig
	for _, dc := range d.Connections() {
		conns = append(conns, redisview.ConnConfig{Name: dc.Name, URL: dc.URL})
	}
	opt, err := redis.ParseURL(conns[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	db := func(n int) *redis.Client {
		o := *opt
		o.DB = n
		c := redis.NewClient(&o)
		t.Cleanup(func() { c.Close() })
		return c
	}
	f := startConsole(t, nil, server.Config{Demo: true, Conns: conns, AuditClient: db(15)}, nil).up(t)
	target := db(14)
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	for i := range 40 {
		k := fmt.Sprintf("bulk:demo:%d", i)
		target.Set(ctx, k, "value "+k, 0)
		if i%2 == 0 {
			target.PExpireAt(ctx, k, exp)
		}
	}
	b := newBrowser(t, f.srv.URL)
	name := conns[0].Name
	code, _, body := b.do(http.MethodGet, route.PatternKeysURL(name, 14, "bulk:demo:*"), nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="bulk-delete"`) {
		t.Fatalf("pattern list on the demo: %d", code)
	}
	tok := csrfRe.FindStringSubmatch(body)[1]
	run := func(path string) string {
		t.Helper()
		code, hdr, _ := b.do(http.MethodPost, path, url.Values{"_csrf": {tok}, "kind": {"delete"}, "pattern": {"bulk:demo:*"}})
		if code != http.StatusSeeOther {
			t.Fatalf("POST %s: %d", path, code)
		}
		return hdr.Get("Location")
	}
	wait := func(job, status string) string {
		t.Helper()
		waitFor(t, job+" "+status, func() bool {
			_, _, body = b.do(http.MethodGet, job, nil)
			return strings.Contains(body, `data-status="`+status+`"`)
		})
		return body
	}
	job := run(route.BulkCountURL(name, 14))
	if body := wait(job, "counted"); !strings.Contains(body, "40 keys counted") {
		t.Fatalf("counted on the demo: %s", body)
	}
	run(job + "/start")
	wait(job, "done")
	if n := target.Exists(ctx, "bulk:demo:0", "bulk:demo:39").Val(); n != 0 {
		t.Fatalf("%d keys left", n)
	}
	undo := run(job + "/undo")
	wait(undo, "counted")
	run(undo + "/start")
	if body := wait(undo, "done"); !strings.Contains(body, "40 acted on") {
		t.Fatalf("undo on the demo: %s", body)
	}
	for i := range 40 {
		k := fmt.Sprintf("bulk:demo:%d", i)
		want := time.Duration(-1)
		if i%2 == 0 {
			want = time.Duration(exp.UnixMilli()) * time.Millisecond
		}
		if v, e := target.Get(ctx, k).Val(), target.PExpireTime(ctx, k).Val(); v != "value "+k || e != want {
			t.Fatalf("%s restored as %q expiring %v, want %v", k, v, e, want)
		}
	}
}
