package apiv1

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bans"
)

func banList(t *testing.T, banning bool) bans.List {
	for _, l := range bans.ListsOf(pack(t, "eisland")) {
		if l.Bans == banning {
			return l
		}
	}
	t.Fatalf("no list with bans=%v in eisland", banning)
	return bans.List{}
}

func TestBansMapsHealthConsistencyAndMembers(t *testing.T) {
	l := banList(t, true)
	r := bans.ListRead{List: l,
		Health: bans.Health{Exists: true, Bytes: (l.Bits + 7) / 8, Bits: l.Bits, Hashes: l.Hashes, Members: 3, Counted: true,
			SetBits: 18, Fill: 18 / float64(l.Bits), FalsePositive: 1e-6, Expected: 1e-8},
		Status: bans.Status{Last: &bans.Consistency{Checked: 3, Total: 3, Bad: 1, Examples: []string{"eve\xff"}, Complete: true,
			Started: t0.Add(-time.Minute), Finished: t0}},
		Members: &bans.Page{Members: []string{"alice", "eve\xff"}, Next: 17, Count: 3},
		Lacking: map[string]bool{"eve\xff": true},
	}
	page := Bans("eisland", matched(pack(t, "eisland")), up(), []bans.ListRead{r, {List: banList(t, false)}}, l.ID, "e", nil)
	b := page.Lists.Items[0]
	if b.Gate != GateOpen || !b.Bans || b.Health == nil || b.Health.Shape != ShapeWhole || *b.Health.SetBits != 18 || !b.Health.Creep {
		t.Errorf("list %+v health %+v", b, b.Health)
	}
	if c := b.Consistency; c == nil || c.State != ConsInconsistent || c.Widespread || c.Current != nil || c.Last.Bad != 1 {
		t.Errorf("consistency %+v", c)
	}
	m := b.Members
	if m == nil || m.Count != 3 || *m.Page.Next != "17" || !m.Partial || *m.Page.Items[0].MissingBits || !*m.Page.Items[1].MissingBits {
		t.Errorf("members %+v", m)
	}
	if m.Filter != "e" || page.Lists.Items[1].Members != nil {
		t.Errorf("the filter is the asked list's: %+v", page.Lists.Items)
	}
	has(t, page, `"false_positive_ratio":0.000001`, `"expected_false_positive_ratio":1e-8`, `"set_members":3`,
		`"examples":[{"b64":"ZXZl/w=="}]`, `"finished_at":"2026-12-01T20:00:00Z"`, `"next":"17"`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

func TestBansNotCountedIsNotZero(t *testing.T) {
	l := banList(t, true)
	r := bans.ListRead{List: l, Health: bans.Health{Exists: true, Bytes: bans.MaxBloomBytes + 1, Bits: l.Bits, Hashes: l.Hashes, Long: true},
		Status: bans.Status{Current: &bans.Consistency{Checked: 100, Total: 400, Started: t0}}, Members: &bans.Page{Count: 0}}
	b := BanListOf(r, "", nil)
	if b.Health.Counted || b.Health.SetBits != nil || b.Health.FillRatio != nil || b.Health.FalsePositive != nil || b.Health.Shape != ShapeLong {
		t.Errorf("uncounted bloom %+v", b.Health)
	}
	if b.Consistency.State != ConsNotKnown || b.Consistency.Last != nil || b.Consistency.Current.FinishedAt != nil {
		t.Errorf("first pass running: %+v", b.Consistency)
	}
	hasNot(t, b, `"set_bits"`, `"fill_ratio"`, `"false_positive_ratio"`)
	has(t, b, `"page":{"items":[],"next":null}`)
	conforms(t, b)
}

func TestBansErrorsSensitiveAndFilters(t *testing.T) {
	l := banList(t, true)
	r := bans.ListRead{List: l, HealthErr: errors.New("NOPERM pw1"), StatusErr: errors.New("down"), MembersErr: errors.New("down")}
	b := BanListOf(r, "", func(err error) string { return "safe: " + strings.ReplaceAll(err.Error(), " pw1", "") })
	if b.Gate != GateUnread || b.Health != nil || b.HealthError != "safe: NOPERM" || b.Consistency != nil || b.Members != nil || b.MembersErr == "" {
		t.Errorf("unread list %+v", b)
	}
	hasNot(t, b, "pw1")

	secret := l
	secret.Sensitive = true
	b = BanListOf(bans.ListRead{List: secret, Sensitive: true}, "", nil)
	if !b.Sensitive || b.Health != nil || b.Consistency != nil || b.Members != nil || b.Gate == GateOpen {
		t.Errorf("sensitive list %+v", b)
	}

	f := banList(t, false)
	b = BanListOf(bans.ListRead{List: f, Members: &bans.Page{Members: []string{"v1"}, Count: 1}}, "v", nil)
	if b.Gate != GateFilter || b.Members.Page.Items[0].MissingBits != nil || b.Members.Filter != "v" {
		t.Errorf("filter list %+v", b)
	}
	conforms(t, b)
	page := Bans("x", matched(pack(t, "eisland")), up(), nil, "", "", nil)
	has(t, page, `"lists":{"items":[],"next":null}`)
	conforms(t, page)
}
