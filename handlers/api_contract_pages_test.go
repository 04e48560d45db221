package handlers_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// apiFamilies is what the limits, locks and quotas answers share: their
// families, each with its rows.
type apiFamilies struct {
	Sweep    struct{ State string }
	Walk     struct{ State string }
	Families struct {
		Items []struct {
			Family string `json:"family"`
			Rows   []struct {
				Key any
			}
		}
	}
}

func (f apiFamilies) rows() int {
	n := 0
	for _, fam := range f.Families.Items {
		n += len(fam.Rows)
	}
	return n
}

// pollContract calls op at target until done says its answer is complete
// (the sweeps read in the background), validating every answer.
func pollContract(t *testing.T, k *contract, c *apiClient, op, target string, done func(*apiFamilies) bool) apiFamilies {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // bounds a failure only: tests run four at a time
	for {
		var v apiFamilies
		k.call(c, op, target, nil, 200, &v)
		if done(&v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not complete in time: %+v", target, v)
		}
		time.Sleep(50 * time.Millisecond) // polling for the sweep, with a deadline
	}
}

// contractOpsPages exercises the Rate limits, Locks, Quotas and Bans
// operations on the seeds' data.
func contractOpsPages(t *testing.T, k *contract, c *apiClient) {
	swept := func(v *apiFamilies) bool { return v.Sweep.State == "swept" }
	if v := pollContract(t, k, c, "GET /api/v1/connections/{conn}/limits", "/api/v1/connections/main/limits", swept); v.rows() == 0 {
		t.Errorf("limits: no row on the seeds' data: %+v", v)
	}
	if v := pollContract(t, k, c, "GET /api/v1/connections/{conn}/locks", "/api/v1/connections/main/locks", swept); v.rows() == 0 {
		t.Errorf("locks: no held lock on the seeds' data: %+v", v)
	}
	k.call(c, "GET /api/v1/connections/{conn}/limits", "/api/v1/connections/nope/limits", nil, 404, nil)
	pollContract(t, k, c, "GET /api/v1/connections/{conn}/quotas", "/api/v1/connections/main/quotas", func(v *apiFamilies) bool { return v.Walk.State != "not_started" })
	var b struct {
		Lists struct {
			Items []struct {
				ID     string `json:"family"`
				Health *struct {
					SetMembers int64 `json:"set_members"`
				}
				Members *struct{ Count int64 }
			}
		}
	}
	k.call(c, "GET /api/v1/connections/{conn}/bans", "/api/v1/connections/main/bans", nil, 200, &b)
	if len(b.Lists.Items) == 0 || b.Lists.Items[0].Health == nil || b.Lists.Items[0].Health.SetMembers == 0 {
		t.Errorf("bans: no list with members on the seeds' data: %+v", b)
	}
	k.call(c, "GET /api/v1/connections/{conn}/bans", "/api/v1/connections/main/bans"+q("cursor", "x"), nil, 400, nil)
}

// contractDBAudit exercises a database's statistics and the audit log
// (after the unban and its undo: the log holds them).
func contractDBAudit(t *testing.T, k *contract, c *apiClient) {
	var st struct {
		DB        int    `json:"db"`
		TotalKeys *int64 `json:"total_keys"`
		Figures   string
	}
	k.call(c, "GET /api/v1/connections/{conn}/db/{n}/stats", "/api/v1/connections/main/db/14/stats", nil, 200, &st)
	if st.DB != 14 || st.TotalKeys == nil || *st.TotalKeys == 0 || st.Figures == "not_known" {
		t.Errorf("db 14 stats: %+v", st)
	}
	k.call(c, "GET /api/v1/connections/{conn}/db/{n}/stats", "/api/v1/connections/main/db/200/stats", nil, 404, nil)
	var vi struct {
		Pack      struct{ State string }
		Databases struct {
			Items []struct {
				DB      int `json:"db"`
				Figures string
			}
		}
	}
	k.call(c, "GET /api/v1/connections/{conn}/violations", "/api/v1/connections/main/violations", nil, 200, &vi)
	if vi.Pack.State != "matched" || len(vi.Databases.Items) == 0 {
		t.Errorf("violations: %+v", vi)
	}
	k.call(c, "GET /api/v1/connections/{conn}/violations", "/api/v1/connections/nope/violations", nil, 404, nil)
	var au struct {
		Entries struct {
			Items []struct{ Action, Phase string }
		}
	}
	k.call(c, "GET /api/v1/audit", "/api/v1/audit"+q("action", "unban"), nil, 200, &au)
	if len(au.Entries.Items) == 0 || au.Entries.Items[0].Action != "unban" {
		t.Errorf("audit of unbans: %+v", au)
	}
	k.call(c, "GET /api/v1/audit", "/api/v1/audit"+q("since", "yesterday-ish"), nil, 400, nil)
}

// contractBrowse exercises a connection's overview and a family's key
// list (walked page by page until it finds a key: SCAN may return none).
func contractBrowse(t *testing.T, k *contract, c *apiClient) {
	var ov struct {
		Conn     string
		Keyspace *struct {
			TotalKeys int64 `json:"total_keys"`
		}
	}
	k.call(c, "GET /api/v1/connections/{conn}/overview", "/api/v1/connections/main/overview", nil, 200, &ov)
	if ov.Conn != "main" || ov.Keyspace == nil || ov.Keyspace.TotalKeys == 0 {
		t.Errorf("overview: %+v", ov)
	}
	k.call(c, "GET /api/v1/connections/{conn}/overview", "/api/v1/connections/nope/overview", nil, 404, nil)
	at, found := "", 0
	for range 50 {
		var ks struct {
			Keys struct {
				Items []struct {
					Key  any
					Type string
				}
				Next *string
			}
		}
		k.call(c, "GET /api/v1/connections/{conn}/db/{n}/keys", "/api/v1/connections/main/db/6/keys"+q("family", "login-lock", "at", at), nil, 200, &ks)
		for _, it := range ks.Keys.Items {
			if it.Type != "string" {
				t.Errorf("a login-lock key is a %q: %+v", it.Type, it)
			}
			found++
		}
		if found > 0 || ks.Keys.Next == nil {
			break
		}
		at = *ks.Keys.Next
	}
	if found == 0 {
		t.Error("keys: no login-lock key on the seeds' data")
	}
	k.call(c, "GET /api/v1/connections/{conn}/db/{n}/keys", "/api/v1/connections/main/db/6/keys"+q("family", "x", "prefix", "y"), nil, 400, nil)
}

// contractSearch exercises a search on the eIsland seed: a glob finds
// the leaderboard's key; an empty query is a 400.
func contractSearch(t *testing.T, k *contract, c *apiClient) {
	var s struct {
		Query struct{ Kind string }
		Hits  struct {
			Items []struct{ Key any }
		}
	}
	k.call(c, "GET /api/v1/connections/{conn}/search", "/api/v1/connections/main/search"+q("q", "mg:score:leaderboard:*"), nil, 200, &s)
	if s.Query.Kind != "glob" || len(s.Hits.Items) == 0 {
		t.Errorf("search of a glob: %+v", s)
	}
	k.call(c, "GET /api/v1/connections/{conn}/search", "/api/v1/connections/main/search"+q("q", "bob_chen"), nil, 200, nil)
	k.call(c, "GET /api/v1/connections/{conn}/search", "/api/v1/connections/main/search", nil, 400, nil)
	// The eIsland pack has no gateway keys: no such page.
	k.call(c, "GET /api/v1/connections/{conn}/gateway-key", "/api/v1/connections/main/gateway-key"+q("id", "gk_x"), nil, 404, nil)
}

// contractGateway exercises a gateway key on a console of the gateway
// seed: a key id the seed uses is present.
func contractGateway(t *testing.T, k *contract) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := demo.SeedGateway(ctx, rs.Client(0), time.Now()); err != nil {
		t.Fatal(err)
	}
	f := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{{Name: "gw", URL: rs.URL(0)}}, PackFor: map[string]string{"gw": "gateway"}}, nil).up(t)
	waitFor(t, "the pack is chosen", func() bool { return f.reg.All()[0].Pack() != nil })
	keys, _, err := rs.Client(0).Scan(ctx, 0, "*gk_*", 100000).Result()
	id := ""
	if len(keys) > 0 {
		id = regexp.MustCompile(`gk_[0-9a-f]+`).FindString(keys[0])
	}
	if err != nil || id == "" {
		t.Fatalf("no gateway key id in the seed: %v %q", err, keys)
	}
	c := newAPIClient(t, f)
	var g struct{ State string }
	k.call(c, "GET /api/v1/connections/{conn}/gateway-key", "/api/v1/connections/gw/gateway-key"+q("id", id), nil, 200, &g)
	if g.State != "present" {
		t.Errorf("gateway key %s: %+v", id, g)
	}
}

// contractVertique exercises the vertique inventory and finder on a
// console of the vertique seed with its secret: alice.w's login-attempts
// bucket is found; the eIsland connection has no vertique buckets.
func contractVertique(t *testing.T, k *contract, main *apiClient) {
	k.call(main, "GET /api/v1/connections/{conn}/vertique/bucket", "/api/v1/connections/main/vertique/bucket"+q("policy", "p", "revision", "1", "key", "k"), nil, 404, nil)
	rs := redistest.Start(t)
	if err := demo.SeedVertique(context.Background(), rs.Client(0), time.Now(), demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	f := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{{Name: "vq", URL: rs.URL(0)}}, PackFor: map[string]string{"vq": "vertique"},
		Vertique: handlers.VertiqueSecret{Secret: []byte(demo.DemoSecret), From: "test"}}, nil).up(t)
	waitFor(t, "the pack is chosen", func() bool { return f.reg.All()[0].Pack() != nil })
	c := newAPIClient(t, f)
	var inv struct {
		Inventory *struct {
			Generations []struct{ Current *bool }
		}
	}
	// The inventory is a bounded walk, and a server a slow probe found
	// down is not asked: on a loaded machine the first answer may have none.
	redistest.Eventually(t, 30*time.Second, "the vertique inventory", func() bool {
		inv.Inventory = nil
		k.call(c, "GET /api/v1/connections/{conn}/vertique", "/api/v1/connections/vq/vertique", nil, 200, &inv)
		return inv.Inventory != nil
	})
	if inv.Inventory == nil || len(inv.Inventory.Generations) < 2 || inv.Inventory.Generations[0].Current == nil || !*inv.Inventory.Generations[0].Current {
		t.Errorf("vertique inventory: %+v", inv)
	}
	var b struct {
		State  string
		Bucket *struct{ Tokens int64 }
	}
	k.call(c, "GET /api/v1/connections/{conn}/vertique/bucket", "/api/v1/connections/vq/vertique/bucket"+q("policy", "login-attempts", "revision", "3", "key", "alice.w", "enc", "parts"), nil, 200, &b)
	if b.State != "found" || b.Bucket == nil {
		t.Errorf("alice.w's bucket: %+v", b)
	}
	k.call(c, "GET /api/v1/connections/{conn}/vertique/bucket", "/api/v1/connections/vq/vertique/bucket"+q("policy", "login-attempts"), nil, 400, nil)
}
