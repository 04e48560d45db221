package apiv1

import (
	"errors"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
)

func subjectOf(t *testing.T) quotas.Subject {
	s, err := quotas.SubjectOf(pack(t, "gateway"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGatewayKeyMapsItsState(t *testing.T) {
	p := pack(t, "gateway")
	sub := subjectOf(t)
	cur := quotaRowOf(t, p, "q:tokens:k\xff:202612")
	cur.Used, cur.TTL = 500, 40*24*time.Hour
	last := quotaRowOf(t, p, "q:tokens:k\xff:202611")
	last.Gone = true
	conc := quotaRowOf(t, p, "q:conc:k\xff")
	conc.Used, conc.TTL = 1, 5*time.Minute
	res := quotaRowOf(t, p, "q:reserved:r1")
	res.Amount, res.TTL = "300", time.Minute
	st := quotas.SubjectState{ID: "k\xff", Subject: sub, Read: t0, BucketKey: "q:rps:k\xff", BucketExists: true, BucketTTL: 2 * time.Minute,
		Bucket:      decode.TokenBucket{Tokens: 0.5, Capacity: 120, Refused: true, RetryAfter: 500 * time.Millisecond, ToFull: 2 * time.Minute},
		Budgets:     []quotas.Period{{Label: "this month", Value: "202612", Row: cur}, {Label: "last month", Value: "202611", Row: last}},
		Concurrency: conc, Reservations: []quotas.Row{res}, Members: []string{"r1"}}
	hint := quotaRowOf(t, p, "cb:hint:openai:gpt-4o")
	hint.State, hint.Open = "open", true
	snap := quotas.Snapshot{Started: true, Pass: 2, Families: []quotas.FamilyRows{{Family: hint.Family, Rows: []quotas.Row{hint}}}}
	page := GatewayKey("gateway", "k\xff", up(), st, nil, snap, nil)

	b := page.Bucket
	if page.State != "present" || b == nil || !b.Throttled || *b.RetryAfterMs != 500 || b.Tokens == nil || *b.Tokens != 0.5 || *b.TTLMs != 120000 {
		t.Errorf("bucket %+v", b)
	}
	if len(page.Budgets) != 2 || !page.Budgets[0].Current || page.Budgets[1].Current || !page.Budgets[1].Row.Gone || page.Budgets[1].Row.TTLMs != nil || *page.Budgets[0].Row.Used != 500 {
		t.Errorf("budgets %+v", page.Budgets)
	}
	if page.InFlight == nil || *page.InFlight.Used != 1 || page.Reservations[0].Request != "r1" || string(*page.Reservations[0].Row.Amount) != "300" {
		t.Errorf("in flight %+v, reservations %+v", page.InFlight, page.Reservations)
	}
	if page.Hints.Walk != WalkWalked || len(page.Hints.Items) != 1 || !page.Hints.Items[0].Open {
		t.Errorf("hints %+v", page.Hints)
	}
	has(t, page, `"id":{"b64":"a/8="}`, `"retry_after_ms":500`, `"period":"202612"`, `"amount":300`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestGatewayKeyAbsentAndNotRead(t *testing.T) {
	sub := subjectOf(t)
	st := quotas.SubjectState{ID: "nobody", Subject: sub, Read: t0, BucketKey: "q:rps:nobody", Concurrency: quotas.Row{Key: "q:conc:nobody", Family: sub.Concurrency, Gone: true}}
	page := GatewayKey("gateway", "nobody", up(), st, nil, quotas.Snapshot{}, nil)
	if page.State != "absent" || page.Bucket.Exists || *page.Bucket.ToFullMs != 0 || page.Bucket.TTLMs != nil || !page.InFlight.Gone || page.Hints.Walk != WalkNotStarted {
		t.Errorf("absent id %+v", page)
	}
	has(t, page, `"budgets":[]`, `"reservations":[]`, `"items":[]`)
	conforms(t, page)

	down := redisview.Status{Checked: t0, Since: t0}
	page = GatewayKey("gateway", "k1", down, quotas.SubjectState{}, nil, quotas.Snapshot{}, nil)
	if page.State != "not_read" || page.Bucket != nil || page.ReadAt != nil {
		t.Errorf("down: %+v", page)
	}
	page = GatewayKey("gateway", "k1", up(), quotas.SubjectState{}, errors.New("NOPERM"), quotas.Snapshot{}, nil)
	if page.State != "not_read" || page.Error != "NOPERM" {
		t.Errorf("read error: %+v", page)
	}
	conforms(t, page)
}
