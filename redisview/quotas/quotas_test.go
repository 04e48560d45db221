package quotas_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

func open(t testing.TB, srv *redistest.Server, pack string) *redisview.Conn {
	t.Helper()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: srv.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.ForcePack(schema.BuiltinPack(pack))
	return conn
}

// walkAll steps the walker until a pass completes, twice (the second
// step after a pass re-reads the kept rows with their members).
func walkAll(t *testing.T, w *quotas.Walker) quotas.Snapshot {
	t.Helper()
	ctx := context.Background()
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("the walk never completed")
		}
		if err := w.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if w.Snapshot().Pass > 0 {
			break
		}
	}
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	return w.Snapshot()
}

func family(t testing.TB, s quotas.Snapshot, id string) quotas.FamilyRows {
	t.Helper()
	for _, f := range s.Families {
		if f.Family.ID == id {
			return f
		}
	}
	t.Fatalf("no family %s in %d families", id, len(s.Families))
	return quotas.FamilyRows{}
}

// The eIsland quotas as its services write them (INCR / INCRBY with the
// month's end as TTL, agent balances by SET), read against the pack's
// limits and sorted by percent used.
func TestEislandQuotasSortedByPercent(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 14, 10, 0, 0, 0, time.UTC)
	db11, db12 := srv.Client(11), srv.Client(12)
	month := now.In(time.FixedZone("+08:00", 8*3600)).Format("200601")
	db11.IncrBy(ctx, "qweather:quota:provider:qweather:"+month, 47_500) // 95%
	db11.ExpireAt(ctx, "qweather:quota:provider:qweather:"+month, now.Add(18*24*time.Hour))
	db11.IncrBy(ctx, "tmt:quota:monthly:"+month, 1_250_000) // 25%
	db11.ExpireAt(ctx, "tmt:quota:monthly:"+month, now.Add(18*24*time.Hour))
	db12.Set(ctx, "agent:balance:alice", "1200.50000000", 0)
	srv.Client(10).Set(ctx, "payment:pricing:pro-month:amount-fen", "1500", 0)
	srv.Client(10).Set(ctx, "payment:pricing:free:desc", "<b>Free</b> plan", 0)
	db12.Set(ctx, "agent:balance:bob", "0.00000000", 0)
	db12.Set(ctx, "agent:balance:carol", "37.12345678", 0)

	conn := open(t, srv, "eisland")
	w := quotas.NewWalker(conn, quotas.Budget{TopN: 2}, func() time.Time { return now })
	s := walkAll(t, w)

	// Families with a limit first, most used first.
	if len(s.Families) < 3 || s.Families[0].Family.ID != "qweather-quota" || s.Families[1].Family.ID != "tmt-quota" {
		var ids []string
		for _, f := range s.Families {
			ids = append(ids, f.Family.ID)
		}
		t.Fatalf("families in order %v, want qweather-quota, tmt-quota first", ids)
	}
	q := s.Families[0].Rows[0]
	if q.Used != 47_500 || q.Limit != 50_000 || q.Percent != 95 || q.Unit != "calls" {
		t.Errorf("qweather row = %d of %d (%.1f%%) %s, want 47,500 of 50,000 (95%%) calls", q.Used, q.Limit, q.Percent, q.Unit)
	}
	if q.TTL < 17*24*time.Hour {
		t.Errorf("qweather TTL %v", q.TTL)
	}
	tm := s.Families[1].Rows[0]
	if tm.Used != 1_250_000 || tm.Limit != 5_000_000 || tm.Percent != 25 {
		t.Errorf("tmt row = %d of %d (%.1f%%), want 1,250,000 of 5,000,000 (25%%)", tm.Used, tm.Limit, tm.Percent)
	}
	// Balances: the lowest first, top 2 of 3 kept and labelled as cut.
	b := family(t, s, "agent-balance")
	if b.Keys != 3 || !b.Cut || len(b.Rows) != 2 {
		t.Fatalf("balances: %d keys, cut %v, %d rows; want 3, true, 2", b.Keys, b.Cut, len(b.Rows))
	}
	if b.Rows[0].Key != "agent:balance:bob" || b.Rows[1].Key != "agent:balance:carol" || b.Rows[1].Amount != "37.12345678" {
		t.Errorf("balance rows %s (%s), %s (%s); want bob then carol", b.Rows[0].Key, b.Rows[0].Amount, b.Rows[1].Key, b.Rows[1].Amount)
	}

	// Config amounts are shown; text configs are no budget.
	if len(s.Configs) != 1 || s.Configs[0].Key != "payment:pricing:pro-month:amount-fen" || s.Configs[0].Amount != "1500" || s.Configs[0].DB != 10 {
		t.Errorf("configs %+v, want the amount only", s.Configs)
	}

	// Live: an INCRBY shows at the next step, without a new pass.
	db11.IncrBy(ctx, "tmt:quota:monthly:"+month, 3_000_000) // now 85%
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	tm = family(t, w.Snapshot(), "tmt-quota").Rows[0]
	if tm.Used != 4_250_000 || tm.Percent != 85 {
		t.Errorf("after INCRBY: %d (%.1f%%), want 4,250,000 (85%%)", tm.Used, tm.Percent)
	}
}

// The gateway's budgets, reservations, concurrency sets, breaker hints and
// routing version as its gateway-quota and router write them.
func TestGatewayQuotas(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	now := time.Now()
	c := srv.Client(0)
	month := now.UTC().Format("200601")
	c.IncrBy(ctx, "q:tokens:gk_a:"+month, 120_000)
	c.Expire(ctx, "q:tokens:gk_a:"+month, 40*24*time.Hour)
	c.IncrBy(ctx, "q:tokens:gk_b:"+month, 900_000)
	c.Expire(ctx, "q:tokens:gk_b:"+month, 40*24*time.Hour)
	// Last month's budget, larger, is a record: after this month's.
	lastMonth := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0).Format("200601")
	c.Set(ctx, "q:tokens:gk_a:"+lastMonth, 5_000_000, 10*24*time.Hour)
	// Two requests in flight for gk_a: one reserved 3 minutes ago, one
	// whose reservation is gone.
	c.Set(ctx, "q:reserved:req_1", 4096, 2*time.Minute)
	c.SAdd(ctx, "q:conc:gk_a", "req_1", "req_gone")
	c.Expire(ctx, "q:conc:gk_a", 5*time.Minute)
	// A reservation written without its TTL.
	c.Set(ctx, "q:reserved:req_forever", 8192, 0)
	c.Set(ctx, "cb:hint:openai:gpt-4o", "open", 30*time.Second)
	c.Set(ctx, "cfg:routing:version", 42, 0)

	conn := open(t, srv, "gateway")
	w := quotas.NewWalker(conn, quotas.Budget{}, func() time.Time { return now })
	s := walkAll(t, w)

	var order []string
	for _, f := range s.Families {
		order = append(order, f.Family.ID)
	}
	if strings.Join(order, ",") != "monthly-tokens,concurrency,reservation,breaker-hint" {
		t.Errorf("families in order %v: want budgets, then what spends them, hints last", order)
	}
	tok := family(t, s, "monthly-tokens")
	if len(tok.Rows) != 3 || tok.Rows[0].Key != "q:tokens:gk_b:"+month || tok.Rows[0].Used != 900_000 || tok.Rows[0].Limit != 0 ||
		tok.Rows[1].Key != "q:tokens:gk_a:"+month || tok.Rows[0].Past || tok.Rows[0].Period != month {
		t.Fatalf("token budgets %+v, want gk_b's 900,000 first, no limit", tok.Rows)
	}
	if r := tok.Rows[2]; r.Key != "q:tokens:gk_a:"+lastMonth || !r.Past || r.Period != lastMonth || r.Used != 5_000_000 {
		t.Errorf("last month's budget %+v, want it last, as a past period", r)
	}
	if tok.Rows[0].Var("keyId") != "gk_b" {
		t.Errorf("keyId = %q", tok.Rows[0].Var("keyId"))
	}
	res := family(t, s, "reservation")
	if len(res.Rows) != 2 || res.Rows[0].Key != "q:reserved:req_forever" || !res.Rows[0].NoTTL || res.Rows[0].Amount != "8192" {
		t.Fatalf("reservations %+v, want the one without TTL first", res.Rows)
	}
	if r := res.Rows[1]; r.Amount != "4096" || r.Age < 2*time.Minute || r.Age > 3*time.Minute+time.Second {
		t.Errorf("req_1: amount %s, age %v; want 4096, about 3m", r.Amount, r.Age)
	}
	conc := family(t, s, "concurrency")
	if len(conc.Rows) != 1 || conc.Rows[0].Used != 2 || conc.Rows[0].Checked != 2 || len(conc.Rows[0].Orphans) != 1 || conc.Rows[0].Orphans[0] != "req_gone" {
		t.Fatalf("concurrency %+v, want 2 in flight with req_gone flagged", conc.Rows)
	}
	hint := family(t, s, "breaker-hint")
	if len(hint.Rows) != 1 || !hint.Rows[0].Open || hint.Rows[0].TTL <= 0 {
		t.Errorf("hints %+v", hint.Rows)
	}
	if len(s.Configs) != 1 || s.Configs[0].Key != "cfg:routing:version" || s.Configs[0].Amount != "42" {
		t.Errorf("configs %+v, want cfg:routing:version = 42", s.Configs)
	}
	// A key of the wrong type is a row with a note, not an error.
	c.Set(ctx, "q:conc:gk_str", "x", time.Minute)
	s = walkAll(t, w)
	found := false
	for _, r := range family(t, s, "concurrency").Rows {
		if r.Key == "q:conc:gk_str" {
			found = r.Note == "not a set"
		}
	}
	if !found {
		t.Error("a string at a concurrency set's name is not shown as \"not a set\"")
	}
	// A value too long for a count is not read whole.
	c.Set(ctx, "q:tokens:gk_c:"+month, string(make([]byte, 10_000)), time.Hour)
	s = walkAll(t, w)
	for _, r := range family(t, s, "monthly-tokens").Rows {
		if r.Key == "q:tokens:gk_c:"+month && r.Note == "" {
			t.Errorf("a 10,000-byte budget was decoded: %+v", r)
		}
	}
}

// The walk is bounded: each step makes at most Budget.Scans SCAN calls,
// and the commands a step sends do not grow with the number of keys.
func TestWalkIsBounded(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(0)
	month := time.Now().UTC().Format("200601")
	p := c.Pipeline()
	for i := range 5000 {
		p.Set(ctx, "q:tokens:gk_"+strconv.Itoa(i)+":"+month, i, time.Hour)
		p.Set(ctx, "cache:exact:ns:"+strconv.Itoa(i), "x", time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	conn := open(t, srv, "gateway")
	w := quotas.NewWalker(conn, quotas.Budget{TopN: 5, Scans: 3, Count: 100}, nil)
	before, err := srv.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := srv.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := after["scan"] - before["scan"]; n != 3 {
		t.Errorf("one step made %d SCAN calls, budget 3", n)
	}
	// 3 SCANs of COUNT 100 return about 300 keys, half of them budgets:
	// each read with STRLEN, GETRANGE and PTTL.
	if n := after["getrange"] - before["getrange"]; n > 400 {
		t.Errorf("one step read %d values; the budget allows about 150", n)
	}
	if n := after["get"] - before["get"]; n != 0 {
		t.Errorf("%d GETs: values are read with GETRANGE, bounded", n)
	}
	s := w.Snapshot()
	f := family(t, s, "monthly-tokens")
	if len(f.Rows) != 5 || s.Pass != 0 {
		t.Errorf("%d rows (want the top 5), pass %d (want the first still running)", len(f.Rows), s.Pass)
	}
	for i := 1; i < len(f.Rows); i++ {
		if f.Rows[i].Used > f.Rows[i-1].Used {
			t.Errorf("rows not most used first: %d after %d", f.Rows[i].Used, f.Rows[i-1].Used)
		}
	}
	// A complete pass keeps the 5 most used of all 5,000.
	s = walkAll(t, w)
	f = family(t, s, "monthly-tokens")
	if f.Keys != 5000 || f.Rows[0].Used != 4999 || f.Rows[4].Used != 4995 {
		t.Errorf("after a pass: %d keys, top %d … %d; want 5,000 keys, 4,999 … 4,995", f.Keys, f.Rows[0].Used, f.Rows[4].Used)
	}
}

// Many viewers share one walker: Acquire returns the same one.
func TestWalkersShareOneWalker(t *testing.T) {
	srv := redistest.Start(t)
	conn := open(t, srv, "gateway")
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.NewFake(time.Now())
	ws := quotas.NewWalkers(ctx, quotas.Budget{}, 50*time.Millisecond, 50*time.Millisecond, nil, quotas.WithClock(clk))
	a, relA := ws.Acquire(conn)
	b, relB := ws.Acquire(conn)
	if a != b {
		t.Fatal("two viewers got two walkers")
	}
	a.WaitRead(ctx, 2*time.Second)
	if !a.Snapshot().Started {
		t.Error("the walker did not step")
	}
	relA()
	relB()
	clk.Advance(50 * time.Millisecond) // the linger runs out
	c, relC := ws.Acquire(conn)
	if c == a {
		t.Error("the walker outlived its linger")
	}
	relC()
	cancel()
	ws.Wait()
}

// One API key's state through the gateway pack's patterns: the rps bucket
// refilled to now, this and last month's budget, reservations of its
// in-flight requests (one gone), read in two pipelines.
func TestReadSubject(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(0)
	now := time.Date(2026, 12, 14, 10, 0, 0, 0, time.UTC)
	// 10 tokens 5 s ago, refilling 1/s, capacity 60: 15 now.
	c.HSet(ctx, "q:rps:gk_1", "tokens", "10", "last_refill", strconv.FormatInt(now.Add(-5*time.Second).UnixMilli(), 10))
	c.Expire(ctx, "q:rps:gk_1", 2*time.Minute)
	c.Set(ctx, "q:tokens:gk_1:202612", 31_000, 40*24*time.Hour)
	c.Set(ctx, "q:tokens:gk_1:202611", 2_500_000, 20*24*time.Hour)
	c.Set(ctx, "q:reserved:req_a", 1024, 4*time.Minute)
	c.SAdd(ctx, "q:conc:gk_1", "req_a", "req_b")
	c.Expire(ctx, "q:conc:gk_1", 5*time.Minute)
	conn := open(t, srv, "gateway")

	before, _ := srv.CommandCalls(ctx)
	st, err := quotas.ReadSubject(ctx, conn, "gk_1", now)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := srv.CommandCalls(ctx)
	if !st.BucketExists || st.Bucket.Tokens != 15 || st.Bucket.Capacity != 60 || st.Bucket.Refused {
		t.Errorf("bucket: exists %v, %v of %v tokens", st.BucketExists, st.Bucket.Tokens, st.Bucket.Capacity)
	}
	if len(st.Budgets) != 2 || st.Budgets[0].Value != "202612" || st.Budgets[0].Row.Used != 31_000 || st.Budgets[1].Value != "202611" || st.Budgets[1].Row.Used != 2_500_000 {
		t.Errorf("budgets %+v", st.Budgets)
	}
	if st.Concurrency.Used != 2 || len(st.Reservations) != 2 || !st.Reservations[0].Gone || st.Members[0] != "req_b" ||
		st.Reservations[1].Amount != "1024" || st.Reservations[1].Age < 59*time.Second || st.Reservations[1].Age > 61*time.Second {
		t.Errorf("in flight %d, reservations %+v, members %q", st.Concurrency.Used, st.Reservations, st.Members)
	}
	if n := after["sscan"] - before["sscan"]; n != 1 {
		t.Errorf("%d SSCAN calls, want 1", n)
	}
	if !st.Any() {
		t.Error("Any() is false for a key with state")
	}

	// An unknown id has no keys; an empty or overlong id is refused before
	// any read.
	st, err = quotas.ReadSubject(ctx, conn, "gk_nobody", now)
	if err != nil || st.Any() {
		t.Errorf("unknown id: any %v, err %v", st.Any(), err)
	}
	for _, bad := range []string{"", string(make([]byte, 300))} {
		if _, err := quotas.ReadSubject(ctx, conn, bad, now); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
}

// BenchmarkWalkStep measures one walker step on 100,000 budgets and
// 100,000 other keys: the commands it sends and its latency. Run with
// go test -run '^$' -bench WalkStep ./redisview/quotas/
func BenchmarkWalkStep(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	c := srv.Client(0)
	month := time.Now().UTC().Format("200601")
	for i := 0; i < 100_000; i += 1000 {
		p := c.Pipeline()
		for j := i; j < i+1000; j++ {
			p.Set(ctx, "q:tokens:gk_"+strconv.Itoa(j)+":"+month, j, time.Hour)
			p.Set(ctx, "cache:exact:ns:"+strconv.Itoa(j), "x", time.Hour)
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: srv.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("gateway"))
	w := quotas.NewWalker(conn, quotas.Budget{}, nil)
	before, _ := srv.CommandCalls(ctx)
	b.ResetTimer()
	for range b.N {
		if err := w.Step(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after, _ := srv.CommandCalls(ctx)
	var total int64
	for k, n := range after {
		if k != "info" {
			total += n - before[k]
		}
	}
	b.ReportMetric(float64(total)/float64(b.N), "cmds/step")
	b.ReportMetric(float64(after["scan"]-before["scan"])/float64(b.N), "scans/step")
}
