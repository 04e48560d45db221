package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// A key topic's name carries the key and the value window byte-exact, and
// only names a link may carry have one.
func TestKeyTopicRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range []handlers.KeyTopic{
		{Conn: "main", DB: 4, Key: "verify:slider:fail:account:YWRh"},
		{Conn: "main", DB: 0, Key: "k\xff\x00<b>&amp;:é\u202e", Value: route.Value{At: "17", Filter: "a&b=c:d\xfe", View: "hex"}},
		{Conn: "main", DB: 15, Key: strings.Repeat("x", route.MaxLinkedName)},
		// Every parameter of the value window travels, or the live page
		// would show another window than the page it updates.
		{Conn: "main", DB: 3, Key: "z", Value: route.Value{At: "5", Desc: true, Min: "(1.5", Max: "+inf", Member: "m\xff<", Trail: []string{"0", "17"}}},
	} {
		name := tt.String()
		got, err := handlers.ParseTopic(name)
		if err != nil || !reflect.DeepEqual(got, tt) {
			t.Errorf("%q parses to %#v, %v; want %#v", name, got, err, tt)
		}
	}
	long := handlers.KeyTopic{Conn: "main", Key: strings.Repeat("x", route.MaxLinkedName+1)}
	for _, bad := range []string{long.String(), "key:plain:conn=main&db=0", "key:other:conn=main&db=0&k=x", "key:plain:conn=main&db=x&k=x",
		"key:plain:conn=Bad Name&db=0&k=x", "key:plain:conn=main&db=0&k=x&view=pdf", "key:plain:conn=main&db=0&k=x&at=zz"} {
		if _, err := handlers.ParseTopic(bad); err == nil {
			t.Errorf("%.80q parses", bad)
		}
	}
}

// keyFrames subscribes to one key's topic and hands each frame to the
// returned channel until the test ends.
func keyFrames(t *testing.T, f *console, kt handlers.KeyTopic) <-chan string {
	t.Helper()
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + route.LiveURL(kt.String())
	ws, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, res)
	}
	t.Cleanup(func() { ws.Close() })
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			ch <- string(msg)
		}
	}()
	return ch
}

// waitFrame reads frames until one contains every want, failing after 5 s.
func waitFrame(t *testing.T, ch <-chan string, what string, want ...string) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	last := ""
	for {
		select {
		case msg, ok := <-ch:
			if !ok {
				t.Fatalf("%s: the websocket closed; last frame %.400s", what, last)
			}
			last = msg
			all := true
			text := textOf([]byte(msg)) // names wrap at their separators (<wbr>)
			for _, w := range want {
				all = all && strings.Contains(text, w)
			}
			if all {
				return msg
			}
		case <-deadline:
			t.Fatalf("%s: no frame with %q within 5 s; last frame %.600s", what, want, last)
		}
	}
}

// A watched counter's pushes follow it: its count, then its deletion
// (said, not a 404), then a Redis that went away (said, with the last
// figures kept and labelled).
func TestKeyTopicFollowsTheKey(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	ctx := context.Background()
	db := f.redis.Client(4)
	key := "verify:slider:fail:account:" + base64.RawURLEncoding.EncodeToString([]byte("ada@example.com"))
	db.Set(ctx, key, "1", 10*time.Minute)
	frames := keyFrames(t, f, handlers.KeyTopic{Conn: "main", DB: 4, Key: key})
	first := waitFrame(t, frames, "first frame", `id="key-live"`, `hx-swap-oob="true"`, `data-testid="key-meta"`, "slider-fail-account")
	if strings.Contains(first, "disconnected") || strings.Contains(first, "no longer exists") {
		t.Fatalf("first frame: %.600s", first)
	}
	db.IncrBy(ctx, key, 41)
	waitFrame(t, frames, "after INCRBY", ">42<")
	db.Del(ctx, key)
	gone := waitFrame(t, frames, "after DEL", "This key no longer exists — deleted or expired, as of ")
	if strings.Contains(gone, `data-testid="key-meta"`) {
		t.Fatalf("a deleted key still shows its figures: %.600s", gone)
	}
	// Back again: the figures come back.
	db.Set(ctx, key, "7", time.Minute)
	waitFrame(t, frames, "after SET", ">7<", `data-testid="key-meta"`)
	f.redis.Stop()
	down := waitFrame(t, frames, "Redis stopped", "Redis is unreachable", "The figures below are from ")
	if !strings.Contains(down, ">7<") {
		t.Fatalf("the last figures were not kept: %.800s", down)
	}
}

// A sensitive key's topic shows what the page shows — type, TTL, size —
// and never its value: no frame pushed while it changes carries it.
func TestKeyTopicNeverSendsASensitiveValue(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	ctx := context.Background()
	db := f.redis.Client(2)
	key := "verify:code:LOGIN:ada@example.com"
	const secret = "S3CRET-831402"
	db.Set(ctx, key, secret+"-0", time.Hour)
	frames := keyFrames(t, f, handlers.KeyTopic{Conn: "main", DB: 2, Key: key})
	seen := []string{waitFrame(t, frames, "first frame", `data-testid="sensitive-note"`, `data-testid="key-meta"`)}
	// Each write changes the value's length, so each is a new frame.
	for i := 1; i <= 6; i++ {
		db.Set(ctx, key, secret+strings.Repeat("9", i), time.Hour)
		seen = append(seen, waitFrame(t, frames, "after a write", ">"+strconv.Itoa(len(secret)+i)+" bytes<"))
	}
	for _, msg := range seen {
		if strings.Contains(msg, "S3CRET") || strings.Contains(msg, "831402") {
			t.Fatalf("a frame carries the sensitive value: %.600s", msg)
		}
	}
	// The page and its JSON withhold it too.
	for _, accept := range []string{"text/html", "application/json"} {
		code, _, body := get(t, f.srv.URL+route.KeyURL("main", 2, key), "Accept", accept)
		if code != http.StatusOK || strings.Contains(body, "S3CRET") || strings.Contains(body, "831402") {
			t.Fatalf("%s page: %d, value shown: %v", accept, code, strings.Contains(body, "S3CRET"))
		}
	}
}

// A name longer than a link may carry has no topic: the page says its
// live updates are off, and the websocket refuses the topic.
func TestKeyTopicLongNameIsOff(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	ctx := context.Background()
	long := "long:" + strings.Repeat("n", route.MaxLinkedName)
	short := "short:name"
	f.redis.Client(0).Set(ctx, long, "v", 0)
	f.redis.Client(0).Set(ctx, short, "v", 0)
	_, _, page := get(t, f.srv.URL+route.KeyURL("main", 0, long))
	if !strings.Contains(page, `data-testid="key-live-off"`) || !strings.Contains(page, "Live updates are off for names over 4 KiB") || strings.Contains(page, "ws-connect") {
		t.Fatal("the page of a long name does not say its live updates are off")
	}
	if !strings.Contains(page, `data-testid="key-meta"`) {
		t.Fatal("the page of a long name lacks its figures")
	}
	_, _, page = get(t, f.srv.URL+route.KeyURL("main", 0, short))
	if strings.Contains(page, `data-testid="key-live-off"`) || !strings.Contains(page, `ws-connect="`+strings.ReplaceAll(route.LiveURL(handlers.KeyTopic{Conn: "main", Key: short}.String()), "&", "&amp;")+`"`) {
		t.Fatal("the page of a short name is not live")
	}
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws?topic=" + url.QueryEscape(handlers.KeyTopic{Conn: "main", Key: long}.String())
	if _, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}}); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("the long name's topic: %v %+v", err, res)
	}
}

// The embedded demo serves the key topic as real Redis does: a count
// written to a demo server arrives, a deletion is said. The page and its
// JSON read the name's placeholders.
func TestKeyTopicOnDemo(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	d, err := demo.Start(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	dc := d.Connections()[0] // eisland
	f := startConsole(t, rs, server.Config{Demo: true, Conns: []redisview.ConnConfig{{Name: dc.Name, URL: dc.URL}}, PackFor: map[string]string{dc.Name: "eisland"}}, nil).up(t)
	opt, err := redis.ParseURL(dc.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.DB = 4
	db := redis.NewClient(opt)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	key := "verify:slider:fail:account:" + base64.RawURLEncoding.EncodeToString([]byte("<b>zoë</b>\x07"))
	keyMust(t, db.Set(ctx, key, "2", 10*time.Minute).Err())

	_, _, page := get(t, f.srv.URL+route.KeyURL(dc.Name, 4, key))
	if !strings.Contains(page, `data-testid="key-name-parts"`) || !strings.Contains(page, "&lt;b&gt;zoë&lt;/b&gt;\\x07") || strings.Contains(page, "<b>zoë") {
		t.Fatalf("the Name table does not show the account escaped: %.2000s", page)
	}
	code, _, body := get(t, f.srv.URL+route.KeyURL(dc.Name, 4, key), "Accept", "application/json")
	var vm struct {
		NameParts []struct{ Name, Class, Raw, Meaning, How string } `json:"name_parts"`
	}
	if err := json.Unmarshal([]byte(body), &vm); code != http.StatusOK || err != nil || len(vm.NameParts) != 1 ||
		vm.NameParts[0].Name != "account" || vm.NameParts[0].Meaning != "<b>zoë</b>\x07" || vm.NameParts[0].Class != "base64" {
		t.Fatalf("JSON: %d %v %+v", code, err, vm.NameParts)
	}

	frames := keyFrames(t, f, handlers.KeyTopic{Conn: dc.Name, DB: 4, Key: key})
	waitFrame(t, frames, "first frame", `data-testid="key-meta"`, ">2<")
	keyMust(t, db.IncrBy(ctx, key, 3).Err())
	waitFrame(t, frames, "after INCRBY", ">5<")
	keyMust(t, db.Del(ctx, key).Err())
	waitFrame(t, frames, "after DEL", "This key no longer exists — deleted or expired, as of ")
}

func keyMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A topic whose first read fails claims nothing about the key: no
// figures, no "gone", only that Redis could not be read.
func TestKeyTopicFirstReadFailsClaimsNothing(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	f.redis.Client(0).Set(context.Background(), "plain:k", "v", 0)
	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	frames := keyFrames(t, f, handlers.KeyTopic{Conn: "main", Key: "plain:k"})
	msg := waitFrame(t, frames, "first frame", `data-testid="disconnected"`, "Redis is unreachable", "Nothing about this key has been read yet.")
	for _, claim := range []string{`data-testid="key-meta"`, `data-testid="key-gone"`, `data-testid="key-missing"`, `data-testid="key-value"`} {
		if strings.Contains(msg, claim) {
			t.Fatalf("the frame claims %s: %.600s", claim, msg)
		}
	}
}
