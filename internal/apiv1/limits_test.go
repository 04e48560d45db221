package apiv1

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// limitsSnap is a swept snapshot of p holding fams; every other limit or
// lock family of p is swept and empty.
func limitsSnap(p *schema.Pack, fams ...limits.FamilySnap) limits.Snapshot {
	snap := limits.Snapshot{Pack: p, Budget: limits.DefaultBudget}
	have := map[string]bool{}
	for _, f := range fams {
		have[f.Family.ID] = true
	}
	for _, f := range p.Families {
		if c := decode.ClassOf(f); (c == decode.ClassLimit || c == decode.ClassLock) && !have[f.ID] && len(f.DBs) > 0 {
			snap.Families = append(snap.Families, limits.FamilySnap{Family: f, DB: f.DBs[0], Class: c, Passes: 1, Read: true})
		}
	}
	return limits.Snapshot{Pack: p, Budget: limits.DefaultBudget, Families: append(fams, snap.Families...)}
}

func limitRowOf(t *testing.T, p *schema.Pack, db int, key string) limits.Row {
	m := match(t, p, db, key)
	return limits.Row{DB: db, Key: key, Family: m.Family, Vars: m.Vars, ReadAt: t0.Add(-time.Second), PTTL: 2 * time.Minute}
}

func TestLimitsMapsNumbersAndStates(t *testing.T) {
	p := pack(t, "eisland")
	key := "verify:slider:rate:create:account:" + base64.StdEncoding.EncodeToString([]byte("alice"))
	bucket := limitRowOf(t, p, 4, key)
	bucket.State = decode.BucketRow{Stored: 0, LastMs: float64(t0.Add(-time.Second).UnixMilli()), HasLast: true}
	odd := limitRowOf(t, p, 6, "auth:limit:login:failures:bob\xff")
	odd.State = decode.SlidingRow{InWindow: 2, Total: 2}
	fam := func(r limits.Row) limits.FamilySnap {
		return limits.FamilySnap{Family: r.Family, DB: r.DB, Class: decode.ClassOf(r.Family), Rows: []limits.Row{r}, Total: 1, Seen: 1, Passes: 1, Read: true}
	}
	page := Limits("eisland", matched(p), up(), limitsSnap(p, fam(bucket), fam(odd)), "", t0, nil)

	if page.Sweep.State != SweepSwept || page.Pack.State != PackMatched || page.Redis.State != RedisUp {
		t.Errorf("sweep %q, pack %q, redis %q", page.Sweep.State, page.Pack.State, page.Redis.State)
	}
	first := page.Families.Items[0]
	if first.ID != "slider-rate-create-account" || first.Throttled != 1 || len(first.Rows) != 1 {
		t.Fatalf("first family %+v: want the throttled bucket first", first)
	}
	r := first.Rows[0]
	if r.State != LimitThrottled || *r.Limit != 12 || *r.Tokens >= 1 || *r.Tokens <= 0 || r.TTLMs != 119000 || *r.ResetsInMs <= 0 {
		t.Errorf("bucket row %+v", r)
	}
	if r.Subject[0].Name != "account" || r.Subject[0].Value != "alice" || !r.ReadAt.Equal(t0.Add(-time.Second)) || r.ReadAt.Location() != time.UTC {
		t.Errorf("subject %+v, read at %v", r.Subject, r.ReadAt)
	}
	if *first.Policy.Capacity != 12 || *first.Policy.FullInMs != 60000 || first.Policy.Limit != nil {
		t.Errorf("policy %+v", first.Policy)
	}
	has(t, page, `"limit":12`, `"ttl_ms":119000`, `"key":{"b64":"`+base64.StdEncoding.EncodeToString([]byte("auth:limit:login:failures:bob\xff"))+`"}`,
		`"state":"ok"`, `"used":2`, `"window_ms":300000`, `"lock_for_ms":600000`, `"read_at":"2026-12-01T19:59:59Z"`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestLimitsSensitiveRowHasNoValue(t *testing.T) {
	p := pack(t, "eisland")
	r := limitRowOf(t, p, 6, "auth:limit:login:failures:carol")
	r.Family = sensitive(r.Family)
	r.State, r.Err = decode.SlidingRow{InWindow: 4, Total: 4}, "sensitive: the value is not read"
	snap := limitsSnap(p, limits.FamilySnap{Family: r.Family, DB: 6, Class: decode.ClassLimit, Rows: []limits.Row{r}, Total: 1, Passes: 1, Read: true})
	page := Limits("eisland", matched(p), up(), snap, "", t0, nil)
	var row *LimitRow
	for _, f := range page.Families.Items {
		if f.ID == "login-failures" {
			row = &f.Rows[0]
		}
	}
	if row == nil || row.State != LimitUnreadable || row.Used != nil || row.Limit != nil || row.Error == "" {
		t.Fatalf("sensitive row %+v", row)
	}
	hasNot(t, row, `"used"`, `"tokens"`)
}

func TestLimitsNotReadIsNotNone(t *testing.T) {
	p := pack(t, "eisland")
	f := p.Family("slider-rate-create-ip")
	snap := limitsSnap(p, limits.FamilySnap{Family: f, DB: 4, Class: decode.ClassLimit, Total: -1})
	page := Limits("eisland", matched(p), up(), snap, "", t0, nil)
	if page.Sweep.State != SweepFirstPass || len(page.Sweep.NotRead) != 1 || page.Sweep.NotRead[0].ID != f.ID || page.Sweep.FamiliesRead != page.Sweep.Families-1 {
		t.Errorf("sweep %+v", page.Sweep)
	}
	for _, g := range page.Families.Items {
		if g.ID == f.ID {
			t.Errorf("an unread family is listed as a family with no rows: %+v", g)
		}
	}

	// Before the sweep has taken the pack up, every family is unread.
	page = Limits("eisland", matched(p), up(), limits.Snapshot{Budget: limits.DefaultBudget}, "", t0, nil)
	if page.Sweep.State != SweepStarting || len(page.Sweep.NotRead) == 0 || page.Sweep.FamiliesRead != 0 {
		t.Errorf("starting sweep %+v", page.Sweep)
	}
	has(t, page, `"families":{"items":[],"next":null}`, `"refresh_ms":2000`)
	conforms(t, page)

	// No pack yet, and the server not probed: both said, and the sweep
	// starting — never "no family" before the pack is known.
	page = Limits("x", redisview.PackChoice{}, redisview.Status{}, limits.Snapshot{}, "", t0, nil)
	if page.Pack.State != PackMatching || page.Redis.State != RedisConnecting || page.Sweep.State != SweepStarting {
		t.Errorf("unknown connection: %+v", page)
	}
	has(t, page, `"not_read":[]`, `"families":{"items":[],"next":null}`)
}

func TestLimitsFilterCountsHiddenRows(t *testing.T) {
	p := pack(t, "eisland")
	a, b := limitRowOf(t, p, 6, "auth:limit:login:failures:alice"), limitRowOf(t, p, 6, "auth:limit:login:failures:bob")
	snap := limitsSnap(p, limits.FamilySnap{Family: a.Family, DB: 6, Class: decode.ClassLimit, Rows: []limits.Row{a, b}, Total: 2, Passes: 1, Read: true})
	page := Limits("eisland", matched(p), up(), snap, "bob", t0, nil)
	if len(page.Families.Items) != 1 || page.Families.Items[0].Hidden != 1 || string(page.Families.Items[0].Rows[0].Key) != b.Key {
		t.Errorf("filtered: %+v", page.Families.Items)
	}
}
