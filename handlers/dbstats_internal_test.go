package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Keys no family explains get their own row in the domain and family
// tables, so that each table's shares add up to 100%: a 112 MiB unmatched
// key that is 90% of a database is not left out.
func TestDBSharesIncludeUnmatched(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	pack := schema.BuiltinPack("eisland")
	fam := func(id, domain string) *schema.Family {
		f := *pack.Families[0]
		f.ID, f.Domain = id, domain
		return &f
	}
	d := stats.DBDetail{Conn: "main", DB: 3, Pass: 1, CompletedAt: time.Now(),
		Families: []stats.FamilyStats{
			{Family: fam("weather", "cache"), Count: 700, Memory: 7 * mib},
			{Family: fam("translate", "cache"), Count: 200, Memory: 3*mib + mib/3},
			{Family: fam("upload", "limits"), Count: 99, Memory: 2*mib/3 + 1},
		},
		Domains: []stats.DomainStats{
			{Domain: "cache", Count: 900, Memory: 10*mib + mib/3},
			{Domain: "limits", Count: 99, Memory: 2*mib/3 + 1},
		},
		UnmCount: 1, UnmMemory: 112 * mib, Memory: 123 * mib,
	}
	vm := dbVM(d, redisview.PackChoice{}, redisview.Status{Up: true, Checked: time.Now()}, time.Now())
	if n := len(vm.Domains); n != 3 || vm.Domains[n-1].Name != unmatchedRow || vm.Domains[n-1].MemPct != 91 {
		t.Fatalf("domains %+v", vm.Domains)
	}
	if n := len(vm.Families); n != 4 || vm.Families[n-1].ID != unmatchedRow || vm.Families[n-1].Keys != "1" {
		t.Fatalf("families %+v", vm.Families)
	}
	keys, mem := 0, 0
	for _, r := range vm.Domains {
		keys, mem = keys+r.KeysPct, mem+r.MemPct
	}
	if keys != 100 || mem != 100 {
		t.Fatalf("domain shares add to %d%% of keys and %d%% of memory: %+v", keys, mem, vm.Domains)
	}
	keys, mem = 0, 0
	for _, r := range vm.Families {
		keys, mem = keys+r.KeysPct, mem+r.MemPct
	}
	if keys != 100 || mem != 100 {
		t.Fatalf("family shares add to %d%% of keys and %d%% of memory: %+v", keys, mem, vm.Families)
	}
}
