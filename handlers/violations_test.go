package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

// One list holds every violation of a connection, database by database;
// the overview shows each database's count and links to it.
func TestViolationsAcrossDatabases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	now := float64(time.Now().UnixMilli())
	// db6: a login window without a TTL; db14: a leaderboard of the wrong
	// type; db5: a TOTP secret (sensitive) without its TTL — named, never
	// shown; db3: fine.
	f.redis.Client(6).ZAdd(ctx, "auth:limit:login:failures:forever", redis.Z{Score: now, Member: "x"})
	f.redis.Client(14).Set(ctx, "mg:score:leaderboard:2048", "not a zset", 0)
	const secret = "JBSWY3DPEHPK3PXPSECRETSEED"
	f.redis.Client(5).Set(ctx, "totp:security:secret:plain:alice", secret, 0)
	f.redis.Client(3).Set(ctx, "server:wallpaper-detail::1:a:1", "{}", 2*time.Minute)

	u := f.srv.URL + route.ViolationsURL("main")
	// The page's JSON is list-violations' answer.
	type violations struct {
		Complete  bool
		Total     json.RawMessage
		Databases struct {
			Items []struct {
				DB         int
				Figures    string
				Violations struct {
					Count *json.RawMessage
					Items []struct {
						Key     json.RawMessage
						Family  string
						Problem string
					}
				}
			}
			Next *string
		}
	}
	var vm violations
	redistest.Eventually(t, 15*time.Second, "every database swept", func() bool {
		code, hdr, body := get(t, u, "Accept", "application/json")
		if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Fatalf("JSON: %d %s", code, body)
		}
		if strings.Contains(body, secret) {
			t.Fatal("the sensitive value is in the JSON")
		}
		vm = violations{}
		if err := json.Unmarshal([]byte(body), &vm); err != nil {
			t.Fatal(err)
		}
		return vm.Complete
	})
	want := map[int]string{5: "totp:security:secret:plain:alice", 6: "auth:limit:login:failures:forever", 14: "mg:score:leaderboard:2048"}
	for _, d := range vm.Databases.Items {
		k, bad := want[d.DB]
		v := d.Violations
		count := "absent"
		if v.Count != nil {
			count = string(*v.Count) // a number, not a display string
		}
		switch {
		case d.Figures != "exact":
			t.Errorf("db%d: figures %q in a complete answer", d.DB, d.Figures)
		case bad && (count != "1" || len(v.Items) != 1 || string(v.Items[0].Key) != strconv.Quote(k) || v.Items[0].Problem == ""):
			t.Errorf("db%d: %+v", d.DB, d)
		case !bad && (count != "0" || len(v.Items) != 0):
			t.Errorf("db%d has no violation: %+v", d.DB, d)
		}
		delete(want, d.DB)
	}
	if len(want) != 0 || string(vm.Total) != "3" || vm.Databases.Next != nil {
		t.Fatalf("missing %v; total %s; next %v", want, vm.Total, vm.Databases.Next)
	}

	code, _, body := get(t, u)
	if code != http.StatusOK || strings.Contains(body, secret) {
		t.Fatalf("HTML: %d (or the secret shown)", code)
	}
	d := doc(t, body)
	if n := d.Find(`[data-testid="violation-key"]`).Length(); n != 3 {
		t.Fatalf("%d violation rows in the HTML", n)
	}
	if href, _ := d.Find(`[data-testid="violations-db-14"] [data-testid="violation-key"]`).Attr("href"); href != route.KeyURL("main", 14, "mg:score:leaderboard:2048") {
		t.Fatalf("key link %q", href)
	}

	// The overview: each database's count, linking to the list.
	code, _, body = get(t, f.srv.URL+route.OverviewURL("main"))
	if code != http.StatusOK {
		t.Fatalf("overview: %d", code)
	}
	d = doc(t, body)
	for db, n := range map[string]string{"6": "1", "14": "1", "3": "0"} {
		cell := d.Find(`[data-testid="db-` + db + `"] [data-testid="db-violations"]`)
		if got := strings.TrimSpace(cell.Text()); got != n {
			t.Errorf("overview db%s: violations %q, want %q", db, got, n)
		}
	}
	if href, _ := d.Find(`[data-testid="violations-link"]`).Attr("href"); href != route.ViolationsURL("main") {
		t.Fatalf("overview link to the list: %q", href)
	}
}

// A connection without violations says so; an unknown one is 404.
func TestViolationsEmptyAndUnknown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	f.redis.Client(3).Set(context.Background(), "server:wallpaper-detail::1:a:1", "{}", 2*time.Minute)
	u := f.srv.URL + route.ViolationsURL("main")
	redistest.Eventually(t, 15*time.Second, "the empty state", func() bool {
		code, _, body := get(t, u)
		if code != http.StatusOK {
			t.Fatalf("%d", code)
		}
		return doc(t, body).Find(`[data-testid="violations-empty"]`).Length() == 1
	})
	if code, _, _ := get(t, f.srv.URL+route.ViolationsURL("nope")); code != http.StatusNotFound {
		t.Fatalf("unknown connection: %d", code)
	}
	if code, hdr, _ := get(t, f.srv.URL+route.ViolationsURL("nope"), "Accept", "application/json"); code != http.StatusNotFound || !strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("unknown connection as JSON: %d %s", code, hdr.Get("Content-Type"))
	}
}
