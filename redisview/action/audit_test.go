package action

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAuditStreamIsCapped(t *testing.T) {
	f := setup(t, Options{MaxLen: 50})
	a := f.r.Audit()
	for i := range 1000 {
		if _, err := a.writeOutcome(f.ctx, Record{Phase: PhaseOutcome, User: "u", Action: "x", Keys: []string{strconv.Itoa(i)}, Outcome: OutcomeOK}, ""); err != nil {
			t.Fatal(err)
		}
	}
	// MAXLEN ~ trims whole stream nodes (100 entries by default).
	if n := f.audit.XLen(f.ctx, DefaultStream).Val(); n < 50 || n > 150 {
		t.Fatalf("stream holds %d entries with MAXLEN ~ 50", n)
	}
	// Actions go through the same cap.
	seed(t, f.db(0), "string", "k", 0)
	for range 60 {
		f.mustRun(admin, "set-ttl", f.req(0, "k", "ttl", "1h"))
		f.mustRun(admin, "set-ttl", f.req(0, "k", "ttl", "persist"))
	}
	if n := f.audit.XLen(f.ctx, DefaultStream).Val(); n > 150 {
		t.Fatalf("stream holds %d entries with MAXLEN ~ 50", n)
	}
}

func TestReadAuditFiltersAndPaginates(t *testing.T) {
	f := setup(t, Options{})
	alice, bob := Actor{User: "alice", Level: Admin}, Actor{User: "bob", Level: Admin}
	for i := range 12 {
		seed(t, f.db(1), "string", fmt.Sprintf("cache:user:%d", i), 0)
		seed(t, f.db(1), "string", fmt.Sprintf("lock:order:%d", i), 0)
	}
	for i := range 12 {
		who := alice
		if i%3 == 0 {
			who = bob
		}
		f.mustRun(who, "set-ttl", f.req(1, fmt.Sprintf("cache:user:%d", i), "ttl", "1h"))
		f.mustRun(who, "delete-key", f.req(1, fmt.Sprintf("lock:order:%d", i)))
	}
	all := f.records()
	slices.Reverse(all) // newest first, as ReadAudit returns them

	pageAll := func(flt Filter) []Record {
		t.Helper()
		var got []Record
		for pages := 0; ; pages++ {
			recs, next, err := f.r.ReadAudit(f.ctx, flt)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) > flt.Limit {
				t.Fatalf("page of %d > limit %d", len(recs), flt.Limit)
			}
			got = append(got, recs...)
			if next == "" {
				return got
			}
			if pages > 100 {
				t.Fatal("pagination does not end")
			}
			flt.Before = next
		}
	}
	want := func(flt Filter, keep func(Record) bool) {
		t.Helper()
		var exp []string
		for _, r := range all {
			if keep(r) {
				exp = append(exp, r.ID)
			}
		}
		var got []string
		for _, r := range pageAll(flt) {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("filter %+v: got %d records %v, want %d %v", flt, len(got), got, len(exp), exp)
		}
		if len(exp) == 0 {
			t.Fatalf("filter %+v matches nothing: a useless test", flt)
		}
	}
	want(Filter{Limit: 5}, func(Record) bool { return true })
	want(Filter{Limit: 3, User: "bob"}, func(r Record) bool { return r.User == "bob" })
	want(Filter{Limit: 4, Action: "delete-key"}, func(r Record) bool { return r.Action == "delete-key" })
	want(Filter{Limit: 7, Key: "lock:order:1"}, func(r Record) bool {
		return slices.Contains([]string{"lock:order:1", "lock:order:10", "lock:order:11"}, r.Keys[0])
	})
	want(Filter{Limit: 2, User: "alice", Action: "set-ttl", Key: "user:1"}, func(r Record) bool {
		return r.User == "alice" && r.Action == "set-ttl" && (r.Keys[0] == "cache:user:1" || r.Keys[0] == "cache:user:10" || r.Keys[0] == "cache:user:11")
	})

	// Time windows, on the stream ids' milliseconds.
	ms := func(r Record) int64 {
		head, _, _ := strings.Cut(r.ID, "-")
		n, _ := strconv.ParseInt(head, 10, 64)
		return n
	}
	mid := all[len(all)/2]
	cut := time.UnixMilli(ms(mid))
	want(Filter{Limit: 6, Since: cut}, func(r Record) bool { return ms(r) >= ms(mid) })
	want(Filter{Limit: 6, Until: cut}, func(r Record) bool { return ms(r) <= ms(mid) })
	want(Filter{Limit: 6, Since: cut, Until: cut}, func(r Record) bool { return ms(r) == ms(mid) })

	if recs, next, err := f.r.ReadAudit(f.ctx, Filter{User: "nobody"}); err != nil || len(recs) != 0 || next != "" {
		t.Fatalf("no match: %v %q %v", recs, next, err)
	}
	if _, _, err := f.r.ReadAudit(f.ctx, Filter{Before: "1-2-3"}); err == nil {
		t.Fatal("bad cursor accepted")
	}

	// Records are self-describing.
	r := all[0]
	if r.Phase != PhaseOutcome || r.Conn != "main" || r.DB != 1 || r.Level != "admin" || r.Time.IsZero() || r.Summary == "" || r.Ref == "" {
		t.Fatalf("outcome record %+v", r)
	}
	in := all[1]
	if in.Phase != PhaseIntent || in.ID != r.Ref || in.Targets[0].Prior == "" || in.Targets[0].Before == "" || in.Targets[0].PTTL != -1 {
		t.Fatalf("intent record %+v", in)
	}
}

// Reading a page never walks the whole stream, however rare the matches.
func TestReadAuditIsBounded(t *testing.T) {
	f := setup(t, Options{})
	a := f.r.Audit()
	p := f.audit.Pipeline()
	for i := range scanBudget + 500 {
		a.xadd(f.ctx, p, Record{Phase: PhaseOutcome, User: "u", Action: "x", Keys: []string{strconv.Itoa(i)}})
	}
	if _, err := p.Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	recs, next, err := f.r.ReadAudit(f.ctx, Filter{User: "nobody"})
	if err != nil || len(recs) != 0 || next == "" {
		t.Fatalf("got %d records, next %q, %v; want an empty page with a cursor", len(recs), next, err)
	}
	recs, next, err = f.r.ReadAudit(f.ctx, Filter{User: "nobody", Before: next})
	if err != nil || len(recs) != 0 || next != "" {
		t.Fatalf("second page: %d records, next %q, %v", len(recs), next, err)
	}
}
