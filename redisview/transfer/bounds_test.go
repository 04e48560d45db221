package transfer_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// netOut is what Redis has sent its clients so far.
func netOut(t testing.TB, c redis.UniversalClient) int64 {
	t.Helper()
	info := c.Info(context.Background(), "stats").Val()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "total_net_output_bytes:"); ok {
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
	}
	t.Fatal("no total_net_output_bytes")
	return 0
}

// gapWriter records the most bytes Redis sent between two lines written:
// what the export held before it could write.
type gapWriter struct {
	t        testing.TB
	c        redis.UniversalClient
	last     int64
	most     int64
	lines    int
	selfCost int64
}

func (g *gapWriter) Write(b []byte) (int, error) {
	now := netOut(g.t, g.c)
	g.most = max(g.most, now-g.last-g.selfCost)
	g.last = netOut(g.t, g.c)
	g.lines++
	return len(b), nil
}

// An export holds one key, or PageBytes of small ones, at a time: a line
// is written as soon as its key is read, not after the whole SCAN page.
func TestExportHoldsAKeyAtATime(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(0)
	for i := range 8 {
		c.Set(ctx, fmt.Sprint("big:", i), strings.Repeat("b", 1500<<10), 0)
	}
	for i := range 24 {
		c.Set(ctx, fmt.Sprint("mid:", i), strings.Repeat("m", 512<<10), 0)
	}
	g := &gapWriter{t: t, c: c}
	g.last = netOut(t, c)
	g.selfCost = netOut(t, c) - g.last // an INFO reply
	e := transfer.Export{Reader: &transfer.Reader{C: c}, Select: transfer.Selection{Pattern: "*"}, Count: 100}
	if _, err := e.Run(ctx, g); err != nil {
		t.Fatal(err)
	}
	if g.lines != 32 || g.most > transfer.PageBytes+2<<20 {
		t.Errorf("%d lines; %d bytes read before a line was written, want at most %d", g.lines, g.most, transfer.PageBytes+2<<20)
	}
}

// A collection over the byte cap is skipped on its MEMORY USAGE: none of
// its elements is read (before, a list of two large elements was read
// whole, twice, then skipped).
func TestCapCheckedBeforeTheRead(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(0)
	big := strings.Repeat("x", 2<<20)
	c.RPush(ctx, "list", big, big)
	c.HSet(ctx, "hash", "f", big)
	c.SAdd(ctx, "set", big)
	c.ZAdd(ctx, "zset", redis.Z{Member: big, Score: 1})
	c.XAdd(ctx, &redis.XAddArgs{Stream: "stream", Values: []string{"f", big}})
	lim := transfer.ReadLimits{Page: 500, Chunk: 1 << 20, MaxElements: 1000, MaxBytes: 1 << 20}
	before := netOut(t, c)
	var out strings.Builder
	e := transfer.Export{Reader: &transfer.Reader{C: c, Limits: lim}, Select: transfer.Selection{Pattern: "*"}}
	st, err := e.Run(ctx, &out)
	if err != nil || st.Skipped != 5 {
		t.Fatalf("%+v %v:\n%.2000s", st, err, out.String())
	}
	if sent := netOut(t, c) - before; sent > 64<<10 {
		t.Errorf("Redis sent %d bytes for keys over the cap, want none of their values", sent)
	}
	rd := &transfer.Reader{C: c, Limits: lim}
	before = netOut(t, c)
	for _, k := range []string{"list", "hash", "stream"} {
		if r, ok, err := rd.Read(ctx, k); err != nil || !ok || r.Skipped == "" {
			t.Errorf("%s: %+v %v %v", k, r.Skipped, ok, err)
		}
	}
	if sent := netOut(t, c) - before; sent > 64<<10 {
		t.Errorf("one key at a time: Redis sent %d bytes", sent)
	}
}

type countBudget struct{ units atomic.Int64 }

func (b *countBudget) Take(_ context.Context, n int64) error { b.units.Add(n); return nil }

// The budget is drawn by work read: a key, plus one unit per 100
// elements and per 64 KiB, so that large values pace an export as many
// keys would.
func TestBudgetCountsWork(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(0)
	c.Set(ctx, "blob", strings.Repeat("x", 4<<20), 0)
	items := make([]any, 2000)
	for i := range items {
		items[i] = i
	}
	c.RPush(ctx, "list", items...)
	for _, one := range []bool{false, true} {
		b := &countBudget{}
		e := transfer.Export{Reader: &transfer.Reader{C: c, Budget: b}, Select: transfer.Selection{Pattern: "*"}}
		if one {
			e.Select = transfer.Selection{Key: "blob"}
		}
		if _, err := e.Run(ctx, &strings.Builder{}); err != nil {
			t.Fatal(err)
		}
		want := int64(4 << 20 / (64 << 10)) // the blob's bytes
		if !one {
			want += 2000 / 100
		}
		if got := b.units.Load(); got < want {
			t.Errorf("one key %v: %d units taken, want at least %d", one, got, want)
		}
	}
}

// The names remembered against SCAN's repeats are bounded.
func TestExportDedupBounded(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(0)
	for i := range 100 {
		c.Set(ctx, fmt.Sprint("k", i), "v", 0)
	}
	e := transfer.Export{Reader: &transfer.Reader{C: c}, Select: transfer.Selection{Pattern: "*"}, Count: 20, Dedup: 10}
	st, err := e.Run(ctx, &strings.Builder{})
	if err != nil || st.Keys != 100 || st.Remembered > 10 || st.Remembered == 0 {
		t.Errorf("%+v %v, want 100 keys and at most 10 names held", st, err)
	}
}

// The import preview reads from the budget it is given, a unit a key
// at least, and classes a file larger than one pipeline page.
func TestPreviewPaced(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	c := rs.Client(0)
	var file strings.Builder
	for i := range 450 {
		fmt.Fprintf(&file, `{"key":"k%d","type":"string","ttl_ms":null,"value":"v"}`+"\n", i)
		if i%3 == 0 {
			c.Set(ctx, fmt.Sprint("k", i), "v", 0)
		}
	}
	recs, err := transfer.ReadAll(strings.NewReader(file.String()), transfer.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: rs.URL(0)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	b := &countBudget{}
	pv, err := transfer.PreviewImport(ctx, conn, 0, recs, nil, b)
	if err != nil || pv.Count[transfer.Identical] != 150 || pv.Count[transfer.New] != 300 {
		t.Fatalf("%v %v", pv.Count, err)
	}
	if got := b.units.Load(); got < 450 {
		t.Errorf("%d units taken for 450 keys", got)
	}
}
