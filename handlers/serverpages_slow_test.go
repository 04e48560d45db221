package handlers_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

// The slowlog and latency pages against a real server: entries, withheld
// arguments, Keydeck's own marked, the threshold forms for admins only,
// the latency monitor off then on, and an unknown node answered 404.
func TestSlowlogAndLatencyPages(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t, "--enable-debug-command", "yes")
	f := newAuthFixture(t, rs, nil)
	ctx := context.Background()
	app := rs.Client(5)
	defer app.Close()
	app.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	app.Set(ctx, "totp:security:secret:plain:alice", "SECRETMARKER", 0)
	app.Set(ctx, "plain:visible", "shown-value", 0)
	app.Set(ctx, "keydeck:session-secret", "OWNMARKER", 0) // as Keydeck stores its signing secret
	vera, ada := newBrowserAs(t, f, "vera"), newBrowserAs(t, f, "ada")

	code, _, body := vera.do(http.MethodGet, route.SlowlogURL("main"), nil)
	if code != http.StatusOK {
		t.Fatalf("slowlog: %d", code)
	}
	for _, want := range []string{`data-testid="slow-entry"`, `data-testid="slow-withheld"`, `data-testid="slow-own"`, "shown-value",
		"Every command is logged", "a key of sensitive family totp-secret-plain"} {
		if !strings.Contains(body, want) {
			t.Errorf("slowlog page lacks %q", want)
		}
	}
	if strings.Contains(body, "SECRETMARKER") || strings.Contains(body, "OWNMARKER") || strings.Contains(body, "slowlog-threshold-form") {
		t.Error("the viewer's slowlog shows a secret or the threshold form")
	}
	_, _, body = ada.do(http.MethodGet, route.SlowlogURL("main"), nil)
	form := formAction(t, body, "slowlog-threshold-form")
	if form.Get("kind") != "config-set" || form.Get("conn") != "main" || form.Get("arg.parameter") != "slowlog-log-slower-than" ||
		!form.Has("arg.node") || !strings.Contains(body, `name="arg.value"`) {
		t.Errorf("threshold form posts to %v", form)
	}
	// The form previews the change: the setting, its value now and the new one.
	code, _, pv := ada.do(http.MethodPost, route.Preview+"?"+form.Encode(), url.Values{"_csrf": {csrfOf(t, body)}, "arg.value": {"10000"}})
	if code != http.StatusOK || !strings.Contains(pv, "slowlog-log-slower-than") || !strings.Contains(pv, "10000") {
		t.Errorf("the threshold form's preview: %d %.500s", code, pv)
	}

	// Latency: off, then an event.
	code, _, body = vera.do(http.MethodGet, route.LatencyURL("main"), nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="latency-off"`) || strings.Contains(body, "latency-on-form") {
		t.Errorf("latency off (viewer): %d, off shown %v", code, strings.Contains(body, "latency-off"))
	}
	_, _, body = ada.do(http.MethodGet, route.LatencyURL("main"), nil)
	if form := formAction(t, body, "latency-on-form"); form.Get("arg.parameter") != "latency-monitor-threshold" || form.Get("kind") != "config-set" {
		t.Errorf("turn-on form posts to %v", form)
	}
	slow, _ := wsAs(t, vera, handlers.SlowlogTopic{Conn: "main"}.String())
	lat, _ := wsAs(t, vera, handlers.LatencyTopic{Conn: "main"}.String())
	if slow == nil || lat == nil {
		t.Fatal("the slowlog or latency websocket was refused")
	}
	if m := readUntil(t, slow, `data-testid="slow-entry"`); strings.Contains(m, "SECRETMARKER") || strings.Contains(m, "OWNMARKER") {
		t.Error("the slowlog's live fragment shows a secret")
	}
	readUntil(t, lat, `data-testid="latency-off"`)
	app.ConfigSet(ctx, "latency-monitor-threshold", "10")
	app.Do(ctx, "debug", "sleep", "0.03")
	readUntil(t, lat, `data-testid="latency-event"`) // live, without a reload
	code, _, body = vera.do(http.MethodGet, route.LatencyURL("main"), nil)
	for _, want := range []string{`data-testid="latency-event"`, `data-testid="latency-chart"`, `data-testid="own-count"`, "ms (left)", `data-testid="latency-samples"`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("latency page (%d) lacks %q", code, want)
		}
	}
	for _, u := range []string{route.SlowlogURL("main"), route.LatencyURL("main"), route.PubSubURL("main")} {
		if code, _, _ := vera.do(http.MethodGet, route.OnNode(u, "10.9.9.9:7000"), nil); code != http.StatusNotFound {
			t.Errorf("%s on an unknown node: %d, want 404", u, code)
		}
	}
}

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no CSRF token")
	}
	return m[1]
}

// readUntil reads ws's frames until one contains want (5 s at most).
func readUntil(t *testing.T, ws *websocket.Conn, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = ws.SetReadDeadline(deadline)
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("no frame with %s: %v", want, err)
		}
		if strings.Contains(string(msg), want) {
			return string(msg)
		}
	}
}

// formAction is the query of the action of the form with data-testid id.
func formAction(t *testing.T, body, id string) url.Values {
	t.Helper()
	i := strings.Index(body, `data-testid="`+id+`"`)
	if i < 0 {
		t.Fatalf("no form %s", id)
	}
	start := strings.LastIndex(body[:i], "<form")
	tag := body[start:i]
	a := strings.Index(tag, `action="`)
	if a < 0 {
		t.Fatalf("form %s has no action", id)
	}
	act := html.UnescapeString(tag[a+len(`action="`):])
	act = act[:strings.Index(act, `"`)]
	u, err := url.Parse(act)
	if err != nil || u.Path != route.Preview {
		t.Fatalf("form %s posts to %q", id, act)
	}
	return u.Query()
}

// Pub/Sub: counts for a viewer, who may not watch; support watches, sees
// a binary message arrive as valid UTF-8, and keeps to a few watches.
func TestPubSubPageAndWatch(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	sub := f.redis.Client(0)
	defer sub.Close()
	ps := sub.Subscribe(ctx, "orders")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	vera, sam := newBrowserAs(t, f, "vera"), newBrowserAs(t, f, "sam")
	code, _, body := vera.do(http.MethodGet, route.PubSubURL("main"), nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="channel-row"`) || !strings.Contains(body, "1 active channel") ||
		!strings.Contains(body, `data-testid="watch-note"`) || strings.Contains(body, `data-testid="watch-form"`) {
		t.Fatalf("viewer's page: %d %.300s", code, body)
	}
	watch := route.PubSubURL("main") + "?watch=orders&mode=channel"
	if code, _, _ := vera.do(http.MethodGet, watch, nil); code != http.StatusForbidden {
		t.Errorf("viewer's watch: %d, want 403", code)
	}
	topic := "pubsubwatch:" + url.Values{"conn": {"main"}, "node": {""}, "mode": {"channel"}, "name": {"orders"}}.Encode()
	if _, code := wsAs(t, vera, topic); code != http.StatusForbidden {
		t.Errorf("viewer's watch websocket: %d, want 403", code)
	}
	code, _, body = sam.do(http.MethodGet, watch, nil)
	if code != http.StatusOK || !strings.Contains(body, html.EscapeString(route.LiveURL(topic))) {
		t.Fatalf("support's watch page: %d, topic %s not in it", code, topic)
	}
	ws, code := wsAs(t, sam, topic)
	if ws == nil {
		t.Fatalf("support's websocket: %d", code)
	}
	waitFor(t, "the watch subscribed", func() bool {
		n, _ := sub.PubSubNumSub(ctx, "orders").Result()
		return n["orders"] == 2
	})
	sub.Publish(ctx, "orders", "paid <b>\xff")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = ws.SetReadDeadline(deadline)
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("no message pushed: %v", err)
		}
		if !utf8.Valid(msg) {
			t.Fatalf("a fragment is not UTF-8: %q", msg)
		}
		if strings.Contains(string(msg), `data-testid="message"`) {
			if !strings.Contains(string(msg), `paid &lt;b&gt;\xff`) {
				t.Errorf("message shown as %.400s", msg)
			}
			break
		}
	}
	// Three watches each; the fourth distinct one is refused.
	for _, name := range []string{"a", "b"} {
		if w, code := wsAs(t, sam, strings.Replace(topic, "name=orders", "name="+name, 1)); w == nil {
			t.Fatalf("watch %s: %d", name, code)
		}
	}
	if _, code := wsAs(t, sam, strings.Replace(topic, "name=orders", "name=c", 1)); code != http.StatusTooManyRequests {
		t.Errorf("a fourth watch: %d, want 429", code)
	}
	ws.Close()
	waitFor(t, "the watch ended with its last watcher", func() bool {
		n, _ := sub.PubSubNumSub(ctx, "orders").Result()
		return n["orders"] == 1
	})
}

// A stream's key page shows its consumer groups.
func TestStreamGroupsOnKeyPage(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	rc := f.redis.Client(0)
	defer rc.Close()
	for range 3 {
		rc.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{"n", "1"}})
	}
	rc.XGroupCreate(ctx, "jobs", "workers", "0")
	rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{"jobs", ">"}, Count: 1})
	rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w2", Streams: []string{"jobs", ">"}, Count: 1})
	vera := newBrowserAs(t, f, "vera")
	code, _, body := vera.do(http.MethodGet, route.KeyURL("main", 0, "jobs"), nil)
	for _, want := range []string{`data-testid="stream-groups"`, `data-testid="group-name"`, "workers", `data-testid="group-consumer"`,
		`data-testid="pending-entry"`, "2 pending", "lag 1"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("key page (%d) lacks %q", code, want)
		}
	}
	_, _, body = vera.do(http.MethodGet, route.KeyURL("main", 0, "plain:visible"), nil)
	if strings.Contains(body, "stream-groups") {
		t.Error("a non-stream key shows consumer groups")
	}
}
