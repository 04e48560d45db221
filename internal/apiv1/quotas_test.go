package apiv1

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

func quotaRowOf(t *testing.T, p *schema.Pack, key string) quotas.Row {
	m := match(t, p, 0, key)
	return quotas.Row{Key: key, Family: m.Family, Vars: m.Vars, Read: t0, TTL: -1}
}

func TestQuotasMapsEveryRole(t *testing.T) {
	p := pack(t, "gateway")
	budget := quotaRowOf(t, p, "q:tokens:k\xff1:202612")
	budget.Used, budget.Limit, budget.Percent, budget.Unit, budget.Period = 900, 1000, 90, "tokens", "202612"
	budget.ResetsAt = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	conc := quotaRowOf(t, p, "q:conc:k1")
	conc.Used, conc.Checked, conc.Orphans = 2, 2, []string{"req-9"}
	res := quotaRowOf(t, p, "q:reserved:req-9")
	res.Amount, res.TTL, res.Age, res.SetsKnown, res.SetsComplete, res.SetsChecked, res.Overdue, res.Orphaned =
		"1200.50", 30*time.Second, 90*time.Second, true, true, 1, true, true
	hint := quotaRowOf(t, p, "cb:hint:openai:gpt-4o")
	hint.State, hint.Open = "open", true
	s := quotas.Snapshot{Started: true, Pass: 1, CompletedAt: t0, Read: t0, Budget: quotas.DefaultBudget, Families: []quotas.FamilyRows{
		{Family: budget.Family, Rows: []quotas.Row{budget}, Keys: 40, Cut: true},
		{Family: conc.Family, Rows: []quotas.Row{conc}, Keys: 1},
		{Family: res.Family, Rows: []quotas.Row{res}, Keys: 1},
		{Family: hint.Family, Rows: []quotas.Row{hint}, Keys: 1},
	}}
	page := Quotas("gateway", matched(p), up(), s, nil)
	rows := map[string]QuotaRow{}
	for _, f := range page.Families.Items {
		rows[f.ID] = f.Rows[0]
	}
	b := rows[budget.Family.ID]
	if *b.Used != 900 || *b.Limit != 1000 || *b.UsedRatio != 0.9 || b.Level != LevelWarn || b.SubjectID == nil || *b.SubjectID != "k\xff1" {
		t.Errorf("budget row %+v", b)
	}
	if r := rows[res.Family.ID]; r.Orphan != OrphanOrphaned || r.Level != LevelWarn || *r.AgeMs != 90000 || *r.TTLMs != 30000 || string(*r.Amount) != "1200.50" {
		t.Errorf("reservation row %+v", r)
	}
	if c := rows[conc.Family.ID]; c.Limit != nil || c.UsedRatio != nil || c.Level != "" || len(c.Orphans) != 1 {
		t.Errorf("concurrency row without a cap: %+v", c)
	}
	if h := rows[hint.Family.ID]; !h.Open || h.Level != LevelWarn {
		t.Errorf("breaker row %+v", h)
	}
	has(t, page, `"amount":1200.50`, `"used_ratio":0.9`, `"subject_id":{"b64":"a/8x"}`, `"resets_at":"2027-01-01T00:00:00Z"`,
		`"keys":40`, `"cut":true`, `"configs":[]`, `"state":"walked"`, `"orphans":["req-9"]`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestQuotasHiddenAndUndecodedRows(t *testing.T) {
	p := pack(t, "gateway")
	secret := quotaRowOf(t, p, "q:reserved:req-1")
	secret.Family, secret.Note, secret.Amount = sensitive(secret.Family), quotas.Hidden, "777.77"
	bad := quotaRowOf(t, p, "q:reserved:req-2")
	bad.Note, bad.TTL = "the value is not a reserved amount", 5*time.Second
	odd := quotaRowOf(t, p, "q:reserved:req-3")
	odd.Amount, odd.SetsKnown, odd.SetsSensitive, odd.SetsChecked = "Inf", true, true, 2
	s := quotas.Snapshot{Started: true, Families: []quotas.FamilyRows{{Family: bad.Family, Rows: []quotas.Row{secret, bad, odd}, Keys: 3}}}
	page := Quotas("gateway", matched(p), up(), s, nil)
	rows := page.Families.Items[0].Rows
	if !rows[0].Hidden || rows[0].Amount != nil || rows[0].Value != nil {
		t.Errorf("sensitive row %+v", rows[0])
	}
	hasNot(t, page, "777.77")
	if rows[1].Error == "" || rows[1].Amount != nil || rows[1].Orphan != "" {
		t.Errorf("undecoded row %+v", rows[1])
	}
	if rows[2].Amount != nil || rows[2].Value == nil || *rows[2].Value != "Inf" || rows[2].Orphan != OrphanHidden || rows[2].SetsChecked != 0 {
		t.Errorf("non-number amount / hidden sets: %+v", rows[2])
	}
	if page.Walk.State != WalkFirstPass || page.Walk.CompletedAt != nil {
		t.Errorf("walk %+v", page.Walk)
	}
}

func TestQuotasNotStartedAndError(t *testing.T) {
	p := pack(t, "gateway")
	down := redisview.Status{Up: false, Checked: t0, Since: t0.Add(-time.Minute), Err: "dial tcp: refused"}
	page := Quotas("gateway", matched(p), down, quotas.Snapshot{Err: errors.New("AUTH pw123 failed")}, func(err error) string {
		return strings.ReplaceAll(err.Error(), "pw123", "xxxxx")
	})
	if page.Walk.State != WalkNotStarted || page.Walk.ReadAt != nil || page.Redis.State != RedisDown || page.Error != "AUTH xxxxx failed" {
		t.Errorf("page %+v", page)
	}
	has(t, page, `"families":{"items":[],"next":null}`, `"configs":[]`)
	conforms(t, page)
	hasNot(t, page, "pw123")
}
