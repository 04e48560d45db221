package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// frames reads the topic's frames until keep returns false or 10 s pass,
// and returns the last one read.
func (f *console) frames(t *testing.T, topic string, keep func(msg []byte) bool) []byte {
	t.Helper()
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws?topic=" + url.QueryEscape(topic)
	ws, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", topic, err, res)
	}
	defer ws.Close()
	ws.SetReadLimit(64 << 20) // measure what is sent, however big
	deadline := time.Now().Add(10 * time.Second)
	var last []byte
	for time.Now().Before(deadline) {
		_ = ws.SetReadDeadline(deadline)
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		msg = []byte(textOf(msg))
		last = msg
		if !keep(msg) {
			return msg
		}
	}
	t.Fatalf("%s: no frame as wanted in 10 s; last: %.300q", topic, last)
	return nil
}

// A name that is not UTF-8 is shown escaped in every page and frame (which
// stay valid UTF-8, or browsers drop them) and links carry it byte-exact.
func TestInvalidUTF8NamesStayValidAndLinkExact(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	ctx := context.Background()
	const (
		key    = "bad\xff:key"
		board  = "mg:score:leaderboard:2048"
		board2 = "mg:score:leaderboard:\xfe"
		member = "bad\xff"
	)
	f.redis.Client(6).Set(ctx, key, "v", 0)
	f.redis.Client(14).ZAdd(ctx, board, redis.Z{Score: 5, Member: member}, redis.Z{Score: 3, Member: "fine"})
	f.redis.Client(14).ZAdd(ctx, board2, redis.Z{Score: 1, Member: "x"})
	// An audited action on the key puts its name in the audit log.
	conn := f.reg.All()[0]
	admin := action.Actor{User: "anonymous", Level: action.Admin}
	pv, err := f.run.Preview(ctx, admin, conn, "set-ttl", action.Request{Conn: "main", DB: 6, Key: key, Args: map[string]string{"ttl": "1h"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.run.Execute(ctx, admin, conn, pv); err != nil {
		t.Fatal(err)
	}

	valid := func(where, body string) {
		t.Helper()
		if !utf8.ValidString(body) {
			i := 0
			for i < len(body) {
				r, n := utf8.DecodeRuneInString(body[i:])
				if r == utf8.RuneError && n == 1 {
					break
				}
				i += n
			}
			t.Fatalf("%s is not valid UTF-8 near %q", where, body[max(0, i-60):min(len(body), i+20)])
		}
	}
	var db6 string
	waitFor(t, "the sweep lists the key", func() bool {
		_, _, db6 = get(t, f.srv.URL+"/c/main/db/6")
		return strings.Contains(db6, `:key</a>`)
	})
	valid("database page", db6)
	if !strings.Contains(db6, `bad\xff:key`) {
		t.Error("database page: key not shown escaped")
	}
	if !strings.Contains(db6, `href="/c/main/db/6/key?k=bad%FF%3Akey"`) {
		t.Error("database page: the key's link is not byte-exact")
	}

	_, _, list := get(t, f.srv.URL+"/leaderboards")
	valid("leaderboard list", list)
	for _, want := range []string{`bad\xff`, `mg:score:leaderboard:\xfe`, `k=mg%3Ascore%3Aleaderboard%3A%FE`} {
		if !strings.Contains(list, want) {
			t.Errorf("leaderboard list lacks %q", want)
		}
	}

	code, _, page := get(t, f.srv.URL+"/c/main/db/14/leaderboard?k="+url.QueryEscape(board))
	if code != http.StatusOK {
		t.Fatalf("leaderboard page: %d", code)
	}
	valid("leaderboard page", page)
	if !strings.Contains(page, `data-testid="lb-member">bad\xff<`) {
		t.Error("leaderboard page: member not shown escaped")
	}
	if !strings.Contains(page, "arg.member=bad%FF") {
		t.Error("leaderboard page: the remove link does not carry the member byte-exact")
	}

	// The forms of a board whose key is not UTF-8 carry it query-escaped,
	// and the page reads it back byte-exact.
	code, _, page = get(t, f.srv.URL+"/c/main/db/14/leaderboard?k="+url.QueryEscape(board2))
	if code != http.StatusOK {
		t.Fatalf("leaderboard page (key not UTF-8): %d", code)
	}
	valid("leaderboard page (key not UTF-8)", page)
	if !strings.Contains(page, `name="kq" value="mg%3Ascore%3Aleaderboard%3A%FE"`) {
		t.Error("the lookup form does not carry the key as kq")
	}
	code, _, page = get(t, f.srv.URL+"/c/main/db/14/leaderboard?kq="+url.QueryEscape(url.QueryEscape(board2))+"&member=x")
	if code != http.StatusOK || !strings.Contains(page, `data-testid="lookup-rank">1<`) {
		t.Fatalf("lookup through kq: %d, found rank 1: %v", code, strings.Contains(page, "lookup-rank"))
	}

	_, _, audit := get(t, f.srv.URL+"/audit")
	valid("audit page", audit)
	if !strings.Contains(audit, `bad\xff:key`) {
		t.Error("audit page: key not shown escaped")
	}

	// The key page is not escaped by its view; the render net still makes
	// the page valid UTF-8.
	_, _, keyPage := get(t, f.srv.URL+"/c/main/db/6/key?k="+url.QueryEscape(key))
	valid("key page", keyPage)

	for _, topic := range []string{"dbstats:main:6", handlers.LeaderboardTopic{Window: route.Window{Conn: "main", DB: 14, Key: board, N: route.DefaultRows}}.String(), handlers.LeaderboardsTopic{}.String(), "audit:plain:"} {
		msg := f.frames(t, topic, func(msg []byte) bool { return false })
		valid(topic+" frame", string(msg))
	}
	msg := f.frames(t, "dbstats:main:6", func(msg []byte) bool { return !strings.Contains(string(msg), `bad\xff:key`) })
	valid("dbstats frame", string(msg))
}

// However a fragment comes to hold bytes that are not UTF-8, the websocket
// never sends them: browsers drop such a text frame and stop updating.
func TestWebsocketFramesAlwaysValidUTF8(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	msg := f.frames(t, "raw:x", func([]byte) bool { return false })
	if string(msg) != `<p>x\xff\xfe</p>` {
		t.Fatalf("frame = %q, want the bytes escaped", msg)
	}
}

// A 1 MB key name keeps the database page and its frames small: names are
// cut short, and a name too long for a link is not linked.
func TestHugeKeyNameKeepsPageAndFramesSmall(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t)
	huge := "huge:" + strings.Repeat("x", 1<<20)
	f.redis.Client(6).Set(context.Background(), huge, "v", 0)
	f.redis.Client(6).Set(context.Background(), "small:key", "v", 0)
	const bound = 32 << 10 // the page without the key is about 6 KiB
	var page string
	waitFor(t, "the sweep lists the key", func() bool {
		_, _, page = get(t, f.srv.URL+"/c/main/db/6")
		return strings.Contains(page, "huge:xxxx")
	})
	if len(page) > bound {
		t.Fatalf("database page is %d bytes with a 1 MB key name", len(page))
	}
	for _, want := range []string{"1,048,581 bytes", `data-testid="name-unlinked"`, `href="/c/main/db/6/key?k=small%3Akey"`} {
		if !strings.Contains(page, want) {
			t.Errorf("database page lacks %q", want)
		}
	}
	msg := f.frames(t, "dbstats:main:6", func(msg []byte) bool { return !strings.Contains(string(msg), "huge:xxxx") })
	if len(msg) > bound {
		t.Fatalf("database frame is %d bytes with a 1 MB key name", len(msg))
	}
	t.Logf("page %d bytes, frame %d bytes", len(page), len(msg))
}
