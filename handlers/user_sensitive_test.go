package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// sensitivePacks are fresh copies of the built-in packs (the built-ins
// are shared) with the families mark says marked sensitive.
func sensitivePacks(t *testing.T, mark func(p *schema.Pack, f *schema.Family) bool) []*schema.Pack {
	t.Helper()
	var out []*schema.Pack
	for _, b := range schema.Builtin() {
		p, err := b.With(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Families {
			if mark(p, f) {
				f.Sensitive = true
			}
		}
		out = append(out, p)
	}
	return out
}

// dialAs opens a websocket on topic with b's cookies.
func (b *browser) dialAs(topic string) (*websocket.Conn, *http.Response, error) {
	pu, _ := url.Parse(b.base)
	hdr := http.Header{"Origin": {b.base}}
	for _, ck := range b.c.Jar.Cookies(pu) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	return websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.base, "http")+route.LiveURL(topic), hdr)
}

// With the leaderboard and the ban list marked sensitive, a user page —
// HTML, JSON and its live topic — shows neither the user's rank and score
// nor the ban verdict, bits or membership, and says they are hidden
// rather than claiming the user is not on the board or not banned.
func TestUserPageHidesSensitiveBoardAndBan(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	packs := sensitivePacks(t, func(p *schema.Pack, f *schema.Family) bool {
		return p.Name == "eisland" && (f.ID == "mg-leaderboard" || f.ID == "user-ban-set")
	})
	f := startConsole(t, rs, server.Config{Packs: packs, Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}}, nil).up(t)
	ctx := context.Background()
	const user = "carol"
	rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 999_999, Member: user}, redis.Z{Score: 5, Member: "dave"})
	var bloom *schema.BloomParams
	for _, p := range packs {
		if p.Name == "eisland" {
			bloom = p.Family("user-ban-bloom").Params.(*schema.BloomParams)
		}
	}
	for _, pos := range redisview.BloomPositions(user, bloom.Bits, bloom.Hashes) {
		rs.Client(9).SetBit(ctx, "user:ban:bloom", pos, 1)
	}
	rs.Client(9).SAdd(ctx, "user:ban:set", user)
	vera := newBrowser(t, f.srv.URL)
	if code := vera.login("vera", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", code)
	}
	leaks := []string{"999,999", "999999", "#1", "banned", "=1<"}
	check := func(what, out string) {
		t.Helper()
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("%s shows %q: %.3000s", what, l, out)
			}
		}
		if strings.Contains(out, "not on this board") {
			t.Errorf("%s claims the user is not on a board it did not read", what)
		}
	}
	page := route.UserURL("main", user)
	// The leaderboard index finds the board in the background: wait until
	// the page lists it.
	var htm string
	waitFor(t, "the page lists the board", func() bool {
		_, _, htm = vera.do(http.MethodGet, page, nil)
		return strings.Contains(htm, `data-testid="user-rank"`)
	})
	check("the page", htm)
	d := doc(t, htm)
	if n := d.Find(`[data-testid="user-rank-hidden"]`).Length(); n != 1 || !strings.Contains(d.Find(`[data-testid="user-rank-hidden"]`).Text(), "hidden: sensitive") {
		t.Errorf("the rank is not said to be hidden (%d)", n)
	}
	if s := d.Find(`[data-testid="user-ban-verdict"]`).Text(); !strings.Contains(s, "hidden: sensitive") {
		t.Errorf("ban verdict %q, want hidden: sensitive", s)
	}
	code, _, js := vera.do(http.MethodGet, page, nil, "Accept", "application/json")
	if code != http.StatusOK {
		t.Fatalf("JSON %d", code)
	}
	check("the JSON", strings.ReplaceAll(js, `"banned":null`, "")) // the field's name, not a verdict (checked null below)
	// The JSON is get-user's: the board and the ban list say they are
	// sensitive, with nothing read (null found, null banned).
	var uj struct {
		Ranks []struct {
			Sensitive bool
			Found     *bool
		}
		Bans []struct {
			Sensitive bool
			Banned    *bool
		}
	}
	if err := json.Unmarshal([]byte(js), &uj); err != nil || len(uj.Ranks) != 1 || !uj.Ranks[0].Sensitive || uj.Ranks[0].Found != nil ||
		len(uj.Bans) == 0 || !uj.Bans[0].Sensitive || uj.Bans[0].Banned != nil {
		t.Errorf("the JSON does not say what is hidden (%v): %.2000s", err, js)
	}
	ws, res, err := vera.dialAs(handlers.UserTopic{Conn: "main", Name: user}.String())
	if err != nil {
		t.Fatalf("dial: %v %+v", err, res)
	}
	defer ws.Close()
	for i := 0; i < 3; i++ {
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		check("a frame", string(msg))
		if !strings.Contains(string(msg), "hidden: sensitive") {
			t.Errorf("frame %d does not say what is hidden", i)
		}
		rs.Client(14).ZIncrBy(ctx, "mg:score:leaderboard:2048", 1, "dave") // something changes
	}
}
