package apiv1

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/search"
)

func TestSearchMapsHitsScansAndCursor(t *testing.T) {
	p := pack(t, "eisland")
	lock := p.Family("login-lock")
	r := search.Result{Query: search.Parse("alice\xff", p), Keyspace: map[int]int64{6: 40}, Checked: 12, Commands: 9, Scanned: 400,
		Hits: []search.Hit{
			{DB: 6, Key: "auth:limit:login:lock:alice\xff", Family: lock, Type: "string", TTL: 5 * time.Minute},
			{DB: 6, Key: "misc:alice\xff", Type: "set", TTL: -1, Scan: true},
		},
		Scans: []search.ScanState{
			{Scan: search.Scan{ID: "db.6", DB: 6, Match: "*alice\xff*"}, DBKeys: 40, Calls: 2, Examined: 40, Found: 1, Started: true, Cursor: "88"},
			{Scan: search.Scan{ID: "db.7", DB: 7, Match: "*alice*"}, DBKeys: 0, Done: true, Started: true},
		}}
	page := Search("eisland", matched(p), r, search.DefaultLimits)
	if page.Query.Kind != "value" || *page.Query.Value != "alice\xff" || page.User == nil || page.Family != nil {
		t.Errorf("query %+v user %v", page.Query, page.User)
	}
	h := page.Hits.Items
	if len(h) != 2 || h[0].Family != lock.ID || h[0].TTLMs != 300000 || h[0].How != "derived" || h[1].How != "scan" || h[1].TTLMs != -1 || h[1].Family != "" {
		t.Errorf("hits %+v", h)
	}
	if page.Hits.Next == nil || *page.Hits.Next != r.Cursors() || page.Scans[0].State != "stopped" || page.Scans[1].State != "done" {
		t.Errorf("next %v, scans %+v", page.Hits.Next, page.Scans)
	}
	has(t, page, `"key":{"b64":"`, `"time_ms":2000`, `"cap":200`, `"checked":12`, `"db_keys":40`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestSearchFamilyAndEmpty(t *testing.T) {
	p := pack(t, "eisland")
	r := search.Result{Query: search.Parse("login-lock", p), FamilyDBs: []int{6}, Keyspace: map[int]int64{}}
	page := Search("eisland", matched(p), r, search.DefaultLimits)
	if page.Family == nil || page.Family.ID != "login-lock" || page.Family.Databases[0].Keys != nil || page.Query.Value != nil {
		t.Errorf("family page %+v", page.Family)
	}
	has(t, page, `"hits":{"items":[],"next":null}`, `"scans":[]`)
	conforms(t, page)

	page = Search("eisland", matched(p), search.Result{Query: search.Parse("  ", p)}, search.DefaultLimits)
	if page.Query.Kind != "empty" || page.User != nil {
		t.Errorf("empty query %+v", page.Query)
	}
	conforms(t, page)
}
