package apiv1

import (
	"errors"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

func vertiqueFamily(t *testing.T) *schema.Family {
	f, err := vertique.Family(pack(t, "vertique"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestVertiqueMapsGenerations(t *testing.T) {
	f := vertiqueFamily(t)
	secret := VertiqueSecret{Configured: true, From: "environment variable VQ_SECRET", Fingerprint: "3f9a0c1e"}
	inv := vertique.Inventory{Family: f, DBs: []int{0}, Scans: 4, Seen: 900, Complete: true, Read: t0, HasCurrent: true,
		Generations: []vertique.Generation{
			{Fingerprint: "3f9a0c1e", Current: true, Keys: 800, Memory: 80000, MemKeys: 800, MaxTTL: time.Hour},
			{Fingerprint: "00aa11bb", Keys: 100, NoTTL: 2, MaxTTL: -1},
		}}
	page := Vertique("vertique", up(), secret, f, inv, nil, nil)
	g := page.Inventory.Generations
	if page.Family == nil || !*g[0].Current || *g[1].Current || *g[0].Memory != 80000 || g[1].Memory != nil || g[1].MaxTTLMs != -1 || g[0].MaxTTLMs != 3600000 {
		t.Errorf("inventory %+v", page.Inventory)
	}
	has(t, page, `"complete":true`, `"seen":900`, `"no_ttl":2`, `"read_at":"2026-12-01T20:00:00Z"`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)

	// Without a secret, which generation is current is not known: absent.
	inv.HasCurrent = false
	page = Vertique("vertique", up(), VertiqueSecret{}, f, inv, nil, nil)
	if page.Inventory.Generations[0].Current != nil {
		t.Errorf("current without a secret: %+v", page.Inventory.Generations[0])
	}
	hasNot(t, page, `"current"`, `"fingerprint":""`, `"from"`)
	conforms(t, page)
}

func TestVertiqueNotRead(t *testing.T) {
	f := vertiqueFamily(t)
	page := Vertique("vertique", up(), VertiqueSecret{}, nil, vertique.Inventory{}, nil, nil)
	if page.Family != nil || page.Inventory != nil {
		t.Errorf("no family: %+v", page)
	}
	page = Vertique("vertique", redisview.Status{Checked: t0, Err: "dial tcp"}, VertiqueSecret{}, f, vertique.Inventory{}, nil, nil)
	if page.Inventory != nil || page.InvError == "" {
		t.Errorf("down: %+v", page)
	}
	page = Vertique("vertique", up(), VertiqueSecret{}, f, vertique.Inventory{}, errors.New("NOPERM scan"), nil)
	if page.Inventory != nil || page.InvError != "NOPERM scan" {
		t.Errorf("walk error: %+v", page)
	}
	conforms(t, page)
}

func TestVertiqueFindStates(t *testing.T) {
	b := &decode.Bucket4j{Tokens: -2, ToFull: 90 * time.Second, Consumed: 40, TTL: -1, Bandwidths: []decode.Bucket4jBandwidth{
		{Capacity: 10, RefillTokens: 10, RefillPeriod: time.Minute, LastRefill: t0, Stored: -3, Tokens: -2, ToFull: 90 * time.Second}}}
	found := VertiqueFind("ns:v1:3f9a0c1e:ab", 0, decode.Result{Role: schema.RoleBucket4j, State: b}, nil, nil)
	if found.State != "found" || found.Bucket.Tokens != -2 || found.Bucket.Bandwidths[0].RefillPeriodMs != 60000 || found.Bucket.TTLMs != -1 {
		t.Errorf("found %+v", found)
	}
	has(t, found, `"tokens":-2`, `"to_full_ms":90000`, `"last_refill":"2026-12-01T20:00:00Z"`)
	conforms(t, found)
	for _, tc := range []struct {
		res   decode.Result
		err   error
		state string
	}{
		{decode.Result{Note: "the key is gone"}, nil, "absent"},
		{decode.Result{Note: "not a Bucket4j state: layout"}, nil, "unreadable"},
		{decode.Result{Sensitive: true}, nil, "hidden"},
		{decode.Result{}, errors.New("down"), "unreadable"},
	} {
		v := VertiqueFind("k", 0, tc.res, tc.err, nil)
		if v.State != tc.state || v.Bucket != nil {
			t.Errorf("%+v: %+v, want state %s", tc.res, v, tc.state)
		}
		conforms(t, v)
	}
}
