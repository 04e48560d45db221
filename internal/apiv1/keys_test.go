package apiv1

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/schema"
)

func TestKeysMapsAFamilyPage(t *testing.T) {
	p := pack(t, "eisland")
	key := "verify:slider:rate:create:account:" + base64.StdEncoding.EncodeToString([]byte("alice"))
	m := match(t, p, 4, key)
	req := browse.Request{Family: m.Family, Classifier: p.Classifier()}
	pg := browse.Page{Walk: browse.WalkOf(req), Scans: 3, Returned: 120, Next: browse.Cursor{Scan: "1234", Skip: 2},
		Keys: []browse.Key{
			{Name: key, Match: m, Info: browse.Info{Type: "hash", TTL: 90 * time.Second, Size: 2}},
			{Name: key + "x", Match: m, Info: browse.Info{Type: "hash", TTL: -1, Size: -1}},
			{Name: key + "y", Match: m},
		}}
	page := Keys("eisland", 4, req, pg)
	if page.List.Family == nil || page.List.Family.ID != m.Family.ID || page.List.Prefix != nil || page.Walk.State != WalkMore || *page.Keys.Next != "1234.2" {
		t.Errorf("page %+v", page)
	}
	rows := page.Keys.Items
	if *rows[0].TTLMs != 90000 || *rows[0].Size != 2 || rows[0].Subject[0].Value != "alice" {
		t.Errorf("row %+v", rows[0])
	}
	if *rows[1].TTLMs != -1 || rows[1].Size != nil || !rows[2].Gone || rows[2].TTLMs != nil || rows[2].Type != "" {
		t.Errorf("rows %+v", rows[1:])
	}
	has(t, page, `"value":"alice"`, `"match":"verify:slider:rate:create:account:*"`,
		`"type":"hash"`, `"scan_count":200`, `"ttl_ms":-1`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestKeysPrefixPageAtTheEnd(t *testing.T) {
	req := browse.Request{Prefix: "tmp:\xfe", Flat: true, Classifier: schema.NewClassifier(pack(t, "eisland"))}
	page := Keys("eisland", 0, req, browse.Page{End: true, Scans: 1})
	if page.List.Family != nil || *page.List.Prefix != "tmp:\xfe" || !page.List.Flat || page.Walk.State != WalkEnd || page.Keys.Next != nil {
		t.Errorf("page %+v", page)
	}
	has(t, page, `"keys":{"items":[],"next":null}`, `"prefix":{"b64":"`)
	conforms(t, page)
}
