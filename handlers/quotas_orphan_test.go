package handlers_test

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// An orphaned reservation (its request id in no concurrency set, older
// than a request lives) is flagged on its Quotas row for everyone, with
// the release link for admins only; one still in a set, and a young one,
// are not flagged. The key page's decoded panel says the same.
func TestQuotasOrphanedReservation(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	g := rs.Client(0)
	g.Set(ctx, "cfg:routing:version", 1, 0)
	g.SAdd(ctx, "q:conc:gk_a", "req_busy")
	g.Expire(ctx, "q:conc:gk_a", 5*time.Minute)
	g.Set(ctx, "q:reserved:req_busy", 1024, time.Minute)                  // 4m old, in flight
	g.Set(ctx, "q:reserved:req_orphan", 4096, 2*time.Minute)              // 3m old, in no set
	g.Set(ctx, "q:reserved:req_young", 512, 4*time.Minute+50*time.Second) // 10s old, in no set
	cfg := server.Config{Conns: []redisview.ConnConfig{{Name: "gateway", URL: rs.URL(0)}}, PackFor: map[string]string{"gateway": "gateway"},
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}}
	f := startConsole(t, rs, cfg, nil).up(t)
	u := route.QuotasURL("gateway")
	for _, c := range []struct {
		user  string
		admin bool
	}{{"sam", false}, {"ada", true}} {
		b := newBrowser(t, f.srv.URL)
		if code := b.login(c.user, "right-password"); code != 303 {
			t.Fatalf("sign in %s: %d", c.user, code)
		}
		// The JSON is list-quotas': a reservation's orphan check and age,
		// and the release offered to the role that may run it.
		type row struct {
			Key     json.RawMessage
			Orphan  string
			InSet   json.RawMessage `json:"in_set"`
			AgeMs   *int64          `json:"age_ms"`
			Level   string
			Actions []struct{ Kind string }
		}
		rows := map[string]row{}
		waitFor(t, c.user+" sees the orphan", func() bool {
			var vm struct {
				Families struct{ Items []struct{ Rows []row } }
			}
			code, _, body := b.do("GET", u, nil, "Accept", "application/json")
			if code != 200 || json.Unmarshal([]byte(body), &vm) != nil {
				return false
			}
			for _, fam := range vm.Families.Items {
				for _, r := range fam.Rows {
					rows[jsonName(t, r.Key)] = r
				}
			}
			return rows["q:reserved:req_orphan"].Orphan == "orphaned"
		})
		orphan, busy, young := rows["q:reserved:req_orphan"], rows["q:reserved:req_busy"], rows["q:reserved:req_young"]
		if orphan.AgeMs == nil || *orphan.AgeMs < 170000 || *orphan.AgeMs > 200000 || orphan.Level != "warn" {
			t.Errorf("%s: orphan %+v, want 3m old, warned", c.user, orphan)
		}
		if busy.Orphan != "in_flight" || jsonName(t, busy.InSet) != "q:conc:gk_a" || len(busy.Actions) != 0 {
			t.Errorf("%s: busy %+v", c.user, busy)
		}
		if young.Orphan != "young" || len(young.Actions) != 0 {
			t.Errorf("%s: young %+v", c.user, young)
		}
		if got := len(orphan.Actions) == 1 && orphan.Actions[0].Kind == action.KindReleaseReservation; got != c.admin {
			t.Errorf("%s: orphan actions %+v, want the release %v", c.user, orphan.Actions, c.admin)
		}
		want := route.Action{Kind: action.KindReleaseReservation, Conn: "gateway", DB: 0, Key: "q:reserved:req_orphan"}.PreviewURL()
		code, _, page := b.do("GET", u, nil)
		if code != 200 || strings.Contains(page, html.EscapeString(want)) != c.admin || !strings.Contains(page, "orphaned: in no concurrency set") ||
			strings.Contains(page, url.QueryEscape(handlers.QuotasTopic{Conn: "gateway", Act: true}.String())) != c.admin {
			t.Errorf("%s: HTML page %d, release link shown %v", c.user, code, c.admin)
		}
		// The key page's decoded panel.
		code, _, kp := b.do("GET", route.KeyURL("gateway", 0, "q:reserved:req_orphan"), nil)
		if code != 200 || !strings.Contains(kp, "orphaned: its request id is in none of the 1 concurrency set") {
			t.Errorf("%s: key page %d: %.3000s", c.user, code, kp)
		}
		if strings.Contains(kp, action.KindReleaseReservation) != c.admin {
			t.Errorf("%s: key page offers the release: %v", c.user, !c.admin)
		}
	}
	// Support cannot watch the admin's topic.
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	if code, _, _ := sam.do("GET", route.LiveURL(handlers.QuotasTopic{Conn: "gateway", Act: true}.String()), nil); code != 403 {
		t.Fatalf("support on the admin topic: %d", code)
	}
}
