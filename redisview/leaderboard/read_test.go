package leaderboard_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
)

// lbRoundTrips counts the commands and pipelines a client sends: each is one
// round trip.
type lbRoundTrips struct{ n atomic.Int64 }

func (h *lbRoundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *lbRoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *lbRoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

const lbBigSize = 1_000_000

// lbBigMember is the member of the 1M board at display rank r (desc): scores
// are 0..999999, member p<score>.
func lbBigMember(r int64) string { return fmt.Sprintf("p%07d", lbBigSize-1-r) }

func lbMeta(score int, at int64) map[string]string {
	return map[string]string{"score": strconv.Itoa(score), "durationMs": "61000", "moves": "321", "achievedAt": strconv.FormatInt(at, 10)}
}

// lbSameWindow fails unless two reads of a window agree on everything but
// the path they took.
func lbSameWindow(t *testing.T, a, b leaderboard.Window) {
	t.Helper()
	a.Path, b.Path = "", ""
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("windows differ:\n lua:      %+v\n pipeline: %+v", a, b)
	}
}

func TestLeaderboard(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	db14 := rs.Client(14)
	if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "lbuser", "on", ">pw", "~*", "+@read", "+@connection", "+select", "-@scripting").Err(); err != nil {
		t.Fatal(err)
	}
	eisland := schema.BuiltinPack("eisland")
	lua := openConn(t, rs.URL(14))
	lua.ForcePack(eisland)
	fb := openConn(t, "redis://lbuser:pw@"+rs.Addr+"/14")
	fb.ForcePack(eisland)

	// A small board with hostile names; carol has no metadata, hoarder's
	// hash is far bigger than the schema says.
	const small = "mg:score:leaderboard:2048"
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	rows := []struct {
		member string
		score  float64
		meta   map[string]string
	}{
		{"李雷", 900, lbMeta(900, at)},
		{"ops:admin", 800, lbMeta(800, at+1)},
		{"alice smith", 700, lbMeta(700, at+2)},
		{"<script>alert(1)</script>", 600, lbMeta(600, at+3)},
		{"bob", 500, map[string]string{"score": "500", "device": "ios"}},
		{"carol", 400, nil},
		{"hoarder", 100, nil},
		{"zed", -2.5, lbMeta(-2, at+4)},
	}
	p := db14.Pipeline()
	for _, r := range rows {
		p.ZAdd(ctx, small, redis.Z{Score: r.score, Member: r.member})
		if r.meta != nil {
			p.HSet(ctx, "mg:score:user-meta:2048:"+r.member, r.meta)
		}
	}
	var hoard []any
	for i := range 100 {
		hoard = append(hoard, fmt.Sprintf("f%03d", i), i)
	}
	p.HSet(ctx, "mg:score:user-meta:2048:hoarder", hoard...)
	p.ZAdd(ctx, "mg:score:leaderboard:snake", redis.Z{Score: 42, Member: "solo"})
	for i := range 3 {
		p.Set(ctx, fmt.Sprintf("mg:score:leaderboard:refresh:rate:2048:u%d", i), 1, time.Minute)
	}
	p.Set(ctx, "mg:score:leaderboard:broken", "not a zset", 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rs.Client(5).ZAdd(ctx, "mg:score:leaderboard:elsewhere", redis.Z{Score: 1, Member: "x"}).Err(); err != nil {
		t.Fatal(err)
	}

	// The 1,000,000-member board, 10 ZADDs of 10,000 members per round trip.
	const big = "mg:score:leaderboard:big"
	loadStart := time.Now()
	for batch := 0; batch < lbBigSize; batch += 100_000 {
		p := db14.Pipeline()
		for b := batch; b < batch+100_000; b += 10_000 {
			zs := make([]redis.Z, 10_000)
			for i := range zs {
				zs[i] = redis.Z{Score: float64(b + i), Member: fmt.Sprintf("p%07d", b+i)}
			}
			p.ZAdd(ctx, big, zs...)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []int64{0, 1, 500_000, 999_998, 999_999} {
		db14.HSet(ctx, "mg:score:user-meta:big:"+lbBigMember(r), lbMeta(int(lbBigSize-1-r), at))
	}
	t.Logf("loaded %d members in %v", lbBigSize, time.Since(loadStart))

	t.Run("TopNWithMetadata", func(t *testing.T) {
		w, err := leaderboard.Read(ctx, lua, 14, small, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		if w.Path != "lua" || w.Family != "mg-leaderboard" || !w.Desc || w.Retained != 200 || w.Size != int64(len(rows)) || w.Start != 0 {
			t.Fatalf("window header: %+v", w)
		}
		if want := []string{"durationMs", "moves", "achievedAt"}; !reflect.DeepEqual(w.MetaFields, want) {
			t.Fatalf("MetaFields %v, want %v", w.MetaFields, want)
		}
		if w.MetaLabels["durationMs"] != "Duration" || w.MetaFormats["achievedAt"] != "epoch-ms" {
			t.Fatalf("labels %v, formats %v: not the pack's", w.MetaLabels, w.MetaFormats)
		}
		if len(w.Entries) != len(rows) {
			t.Fatalf("%d entries, want %d", len(w.Entries), len(rows))
		}
		for i, r := range rows {
			e := w.Entries[i]
			if e.Rank != int64(i) || e.Member != r.member || e.Score != r.score {
				t.Errorf("entry %d: %+v, want %q %v", i, e, r.member, r.score)
			}
			if r.member == "hoarder" {
				if !e.MetaTruncated || len(e.Meta) != leaderboard.MetaFieldCap {
					t.Errorf("hoarder: truncated=%v, %d fields; want the cap", e.MetaTruncated, len(e.Meta))
				}
				continue
			}
			if !maps.Equal(e.Meta, r.meta) || (r.meta == nil) != (e.Meta == nil) || e.MetaTruncated {
				t.Errorf("%q meta %v (truncated %v), want %v", r.member, e.Meta, e.MetaTruncated, r.meta)
			}
		}
		w2, err := leaderboard.Read(ctx, fb, 14, small, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		if w2.Path != "pipeline" {
			t.Fatalf("fallback connection read with %q", w2.Path)
		}
		if leaderboard.ScriptStatus(fb) == "" || leaderboard.ScriptStatus(lua) != "" {
			t.Errorf("script status: fallback %q, lua %q", leaderboard.ScriptStatus(fb), leaderboard.ScriptStatus(lua))
		}
		lbSameWindow(t, w, w2)
		// A window in the middle of the small board.
		w, _ = leaderboard.Read(ctx, lua, 14, small, 2, 3)
		w2, _ = leaderboard.Read(ctx, fb, 14, small, 2, 3)
		if len(w.Entries) != 3 || w.Entries[0].Member != "alice smith" || w.Start != 2 || w.Entries[2].Rank != 4 {
			t.Fatalf("window 2..4: %+v", w.Entries)
		}
		lbSameWindow(t, w, w2)
	})

	t.Run("LuaIsOneRoundTrip", func(t *testing.T) {
		for _, tc := range []struct {
			c         *redisview.Conn
			trips     int64
			evalsha   int64
			zrevrange int64
		}{
			{lua, 1, 1, 1},
			{fb, 2, 0, 1},
		} {
			if _, err := leaderboard.Read(ctx, tc.c, 14, small, 0, 50); err != nil { // warm: script cached, mode known
				t.Fatal(err)
			}
			h := &lbRoundTrips{}
			tc.c.DB(14).AddHook(h)
			before, err := rs.CommandCalls(ctx)
			if err != nil {
				t.Fatal(err)
			}
			const reads = 5
			for range reads {
				if _, err := leaderboard.Read(ctx, tc.c, 14, small, 0, 50); err != nil {
					t.Fatal(err)
				}
			}
			after, _ := rs.CommandCalls(ctx)
			d := func(cmd string) int64 { return after[cmd] - before[cmd] }
			if got := h.n.Load(); got != reads*tc.trips {
				t.Errorf("%d round trips for %d reads, want %d each", got, reads, tc.trips)
			}
			if d("evalsha_ro") != reads*tc.evalsha || d("eval_ro")+d("eval")+d("evalsha") != 0 {
				t.Errorf("script calls: evalsha_ro %d, eval_ro %d, eval %d, evalsha %d", d("evalsha_ro"), d("eval_ro"), d("eval"), d("evalsha"))
			}
			if d("zrevrange") != reads*tc.zrevrange || d("zcard") != reads {
				t.Errorf("zrevrange %d, zcard %d for %d reads", d("zrevrange"), d("zcard"), reads)
			}
			if d("hscan") != reads*int64(len(rows)) { // carol has no hash but is looked up
				t.Errorf("hscan %d for %d reads", d("hscan"), reads)
			}
		}
	})

	t.Run("MillionMemberWindows", func(t *testing.T) {
		for _, tc := range []struct {
			name         string
			start, count int64
			want         int
		}{
			{"start", 0, 50, 50},
			{"middle", 499_990, 50, 50},
			{"end", 999_980, 50, 20},
			{"past the end", lbBigSize, 50, 0},
		} {
			t0 := time.Now()
			w, err := leaderboard.Read(ctx, lua, 14, big, tc.start, tc.count)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(t0)
			if w.Size != lbBigSize || w.Start != tc.start || len(w.Entries) != tc.want || w.Path != "lua" {
				t.Fatalf("%s: size %d start %d, %d entries via %s", tc.name, w.Size, w.Start, len(w.Entries), w.Path)
			}
			for i, e := range w.Entries {
				r := tc.start + int64(i)
				if e.Rank != r || e.Member != lbBigMember(r) || e.Score != float64(lbBigSize-1-r) {
					t.Fatalf("%s: entry %d = %+v, want rank %d %s", tc.name, i, e, r, lbBigMember(r))
				}
				hasMeta := r == 0 || r == 1 || r == 500_000 || r >= 999_998
				if (e.Meta != nil) != hasMeta || (hasMeta && e.Meta["score"] != strconv.FormatInt(lbBigSize-1-r, 10)) {
					t.Fatalf("%s: rank %d meta %v", tc.name, r, e.Meta)
				}
			}
			w2, err := leaderboard.Read(ctx, fb, 14, big, tc.start, tc.count)
			if err != nil {
				t.Fatal(err)
			}
			lbSameWindow(t, w, w2)
			t.Logf("%s: %v", tc.name, took)
		}
	})

	t.Run("CountCap", func(t *testing.T) {
		w, err := leaderboard.Read(ctx, lua, 14, big, 100, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Entries) != leaderboard.MaxWindow || w.Entries[0].Rank != 100 {
			t.Fatalf("%d entries from rank %d, want %d from 100", len(w.Entries), w.Entries[0].Rank, leaderboard.MaxWindow)
		}
		w, _ = leaderboard.Read(ctx, lua, 14, big, -5, 0)
		if len(w.Entries) != leaderboard.DefaultWindow || w.Start != 0 {
			t.Fatalf("count 0 from -5: %d entries from %d", len(w.Entries), w.Start)
		}
	})

	t.Run("Lookup", func(t *testing.T) {
		for _, tc := range []struct {
			member           string
			rank, start, len int64
		}{
			{lbBigMember(0), 0, 0, 4},
			{lbBigMember(2), 2, 0, 6},
			{lbBigMember(500_000), 500_000, 499_997, 7},
			{lbBigMember(lbBigSize - 1), lbBigSize - 1, lbBigSize - 4, 4},
		} {
			for _, c := range []*redisview.Conn{lua, fb} {
				w, rank, found, err := leaderboard.Lookup(ctx, c, 14, big, tc.member, 3)
				if err != nil || !found || rank != tc.rank {
					t.Fatalf("%s: rank %d found %v err %v, want rank %d", tc.member, rank, found, err, tc.rank)
				}
				if w.Start != tc.start || int64(len(w.Entries)) != tc.len || w.Size != lbBigSize {
					t.Fatalf("%s: window from %d with %d entries, want from %d with %d", tc.member, w.Start, len(w.Entries), tc.start, tc.len)
				}
				e, ok := w.Find(tc.member)
				if !ok || e.Rank != tc.rank || e.Score != float64(lbBigSize-1-tc.rank) {
					t.Fatalf("%s: entry %+v", tc.member, e)
				}
				for i, e := range w.Entries {
					if e.Member != lbBigMember(tc.start+int64(i)) {
						t.Fatalf("%s: neighbour %d is %s", tc.member, i, e.Member)
					}
				}
			}
		}
		w, rank, found, err := leaderboard.Lookup(ctx, lua, 14, small, "ops:admin", 1)
		if err != nil || !found || rank != 1 || len(w.Entries) != 3 || w.Entries[1].Meta["score"] != "800" {
			t.Fatalf("ops:admin: rank %d found %v err %v window %+v", rank, found, err, w.Entries)
		}
		w, rank, found, err = leaderboard.Lookup(ctx, lua, 14, big, "nobody", 3)
		if err != nil || found || rank != -1 || len(w.Entries) != 0 || w.Size != lbBigSize {
			t.Fatalf("absent member: rank %d found %v err %v window %+v", rank, found, err, w)
		}
	})

	t.Run("WrongTypeIsAnErrorNotARefusal", func(t *testing.T) {
		for _, c := range []*redisview.Conn{lua, fb} {
			if _, err := leaderboard.Read(ctx, c, 14, "mg:score:leaderboard:broken", 0, 10); err == nil {
				t.Fatal("no error reading a string as a leaderboard")
			}
		}
		if s := leaderboard.ScriptStatus(lua); s != "" {
			t.Fatalf("a WRONGTYPE made the connection give up scripts: %s", s)
		}
		if w, _ := leaderboard.Read(ctx, lua, 14, small, 0, 1); w.Path != "lua" {
			t.Fatalf("path %q after a wrong-type read", w.Path)
		}
		w, err := leaderboard.Read(ctx, lua, 14, "mg:score:leaderboard:missing", 0, 10)
		if err != nil || w.Size != 0 || len(w.Entries) != 0 {
			t.Fatalf("missing key: %+v, %v", w, err)
		}
	})

	t.Run("List", func(t *testing.T) {
		list, truncated, err := leaderboard.List(ctx, lua, 100)
		if err != nil || truncated {
			t.Fatal(err, truncated)
		}
		want := []leaderboard.Summary{
			{DB: 14, Key: small, Family: "mg-leaderboard", Size: int64(len(rows)), TopMember: "李雷", TopScore: 900, HasTop: true, Desc: true},
			{DB: 14, Key: big, Family: "mg-leaderboard", Size: lbBigSize, TopMember: lbBigMember(0), TopScore: lbBigSize - 1, HasTop: true, Desc: true},
			{DB: 14, Key: "mg:score:leaderboard:broken", Family: "mg-leaderboard", Size: -1, Desc: true},
			{DB: 14, Key: "mg:score:leaderboard:snake", Family: "mg-leaderboard", Size: 1, TopMember: "solo", TopScore: 42, HasTop: true, Desc: true},
		}
		if len(list) != len(want) {
			t.Fatalf("listed %+v", list)
		}
		for i := range want {
			got := list[i]
			if want[i].Size == -1 {
				if got.Err == "" {
					t.Errorf("%s: no error for a string", got.Key)
				}
				got.Err = ""
			}
			if got != want[i] {
				t.Errorf("entry %d: %+v, want %+v", i, got, want[i])
			}
		}
		list, truncated, err = leaderboard.List(ctx, lua, 2)
		if err != nil || !truncated || len(list) != 2 {
			t.Fatalf("limit 2: %d listed, truncated %v, %v", len(list), truncated, err)
		}
		list, truncated, _ = leaderboard.List(ctx, lua, 4)
		if truncated || len(list) != 4 {
			t.Fatalf("limit 4: %d listed, truncated %v", len(list), truncated)
		}
		fbList, _, err := leaderboard.List(ctx, fb, 4)
		if err != nil || !reflect.DeepEqual(fbList, list) {
			t.Fatalf("read-only user lists %+v (%v)", fbList, err)
		}

		bare := openConn(t, rs.URL(14))
		list, truncated, err = leaderboard.List(ctx, bare, 100)
		if err != nil || truncated || len(list) != 0 {
			t.Fatalf("without a pack: %+v %v %v", list, truncated, err)
		}
		if _, why := leaderboard.Families(bare); why == "" {
			t.Fatal("no reason given for an empty list")
		}
		if fams, why := leaderboard.Families(lua); len(fams) != 1 || why != "" {
			t.Fatalf("eisland leaderboard families: %v %q", fams, why)
		}
		// Without a pack a key is still readable as a plain sorted set.
		w, err := leaderboard.Read(ctx, bare, 14, small, 0, 2)
		if err != nil || w.Path != "pipeline" || w.MetaWhy == "" || w.Entries[0].Member != "李雷" || w.Entries[0].Meta != nil {
			t.Fatalf("plain read: %+v %v", w, err)
		}
	})

	t.Run("CompanionKeys", func(t *testing.T) {
		pl := leaderboard.NewPlan(lua, 14, small)
		if k, ok := pl.MetaKey("ops:admin"); !ok || k != "mg:score:user-meta:2048:ops:admin" {
			t.Errorf("meta key %q %v", k, ok)
		}
		if k, ok := pl.HighScoreKey("李雷"); !ok || k != "mg:score:high:2048:李雷" {
			t.Errorf("high-score key %q %v", k, ok)
		}
	})

	t.Run("AscendingPackWithoutTemplate", func(t *testing.T) {
		pack, err := schema.Load("lbtest.yaml", []byte(`name: lbtest
families:
  - id: race
    db: 3
    pattern: "race:times:{track}"
    type: zset
    ttl: none
    domain: Race
    role: leaderboard
    params: {order: asc, member: uid, meta: "race:meta:{track}:{uid}"}
  - id: race-meta
    db: 3
    pattern: "race:meta:{track:segment}:{uid:digits}"
    type: hash
    ttl: none
    domain: Race
    role: leaderboard-meta
    params: {leaderboard: "race:times:{track}"}
`))
		if err != nil {
			t.Fatal(err)
		}
		c := openConn(t, rs.URL(3))
		c.ForcePack(pack)
		db3 := rs.Client(3)
		db3.ZAdd(ctx, "race:times:monza", redis.Z{Score: 81.2, Member: "17"}, redis.Z{Score: 79.9, Member: "42"}, redis.Z{Score: 80.5, Member: "x:y"})
		db3.HSet(ctx, "race:meta:monza:42", "car", "red", "lap", "3")
		db3.HSet(ctx, "race:meta:monza:17", "car", "blue")
		db3.HSet(ctx, "race:meta:monza:x:y", "car", "never read")
		w, err := leaderboard.Read(ctx, c, 3, "race:times:monza", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if w.Desc || w.Path != "pipeline" || len(w.Entries) != 3 {
			t.Fatalf("asc board: %+v", w)
		}
		if w.Entries[0].Member != "42" || w.Entries[1].Member != "x:y" || w.Entries[1].Meta != nil || w.Entries[2].Meta["car"] != "blue" {
			t.Fatalf("asc entries: %+v", w.Entries)
		}
		if !reflect.DeepEqual(w.MetaFields, []string{"car", "lap"}) {
			t.Fatalf("MetaFields %v", w.MetaFields)
		}
		_, rank, found, err := leaderboard.Lookup(ctx, c, 3, "race:times:monza", "17", 5)
		if err != nil || !found || rank != 2 {
			t.Fatalf("ZRANK lookup: %d %v %v", rank, found, err)
		}
		list, _, err := leaderboard.List(ctx, c, 10)
		if err != nil || len(list) != 1 || list[0].TopMember != "42" || list[0].Desc {
			t.Fatalf("asc list: %+v %v", list, err)
		}
	})
}

// The embedded demo (miniredis) runs the same script: one round trip there too.
func TestLeaderboardEmbeddedDemo(t *testing.T) {
	ctx := context.Background()
	d, err := demo.Start(ctx, quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	c := openConn(t, d.Connections()[0].URL)
	c.ForcePack(schema.BuiltinPack("eisland"))
	list, truncated, err := leaderboard.List(ctx, c, 100)
	if err != nil || truncated || len(list) != 4 {
		t.Fatalf("demo leaderboards: %+v %v %v", list, truncated, err)
	}
	for _, s := range list {
		if s.DB != 14 || s.Size == 0 || !s.HasTop || s.Err != "" {
			t.Errorf("summary %+v", s)
		}
	}
	w, err := leaderboard.Read(ctx, c, 14, "mg:score:leaderboard:2048", 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	if w.Path != "lua" || int64(len(w.Entries)) != min(w.Size, 200) || w.Size == 0 {
		t.Fatalf("demo read via %q, %d entries (%s)", w.Path, len(w.Entries), leaderboard.ScriptStatus(c))
	}
	withMeta := 0
	for i, e := range w.Entries {
		if e.Rank != int64(i) || (i > 0 && e.Score > w.Entries[i-1].Score) {
			t.Fatalf("entry %d out of order: %+v", i, e)
		}
		if e.Meta != nil {
			withMeta++
			if e.Meta["achievedAt"] == "" {
				t.Errorf("%q: meta %v", e.Member, e.Meta)
			}
		}
	}
	if withMeta == 0 {
		t.Fatal("no entry with metadata")
	}
	// The simulator writes meanwhile: the member exists, its rank may move.
	if _, rank, found, err := leaderboard.Lookup(ctx, c, 14, "mg:score:leaderboard:2048", w.Entries[0].Member, 2); err != nil || !found || rank < 0 {
		t.Fatalf("lookup %q: %d %v %v", w.Entries[0].Member, rank, found, err)
	}
}

func TestMoves(t *testing.T) {
	e := func(rank int64, m string, s float64) leaderboard.Entry {
		return leaderboard.Entry{Rank: rank, Member: m, Score: s}
	}
	for _, tc := range []struct {
		name      string
		prev, cur []leaderboard.Entry
		want      map[string]leaderboard.Move
	}{
		{"first read", nil, []leaderboard.Entry{e(0, "a", 3)},
			map[string]leaderboard.Move{"a": {Kind: leaderboard.MoveNew, From: -1}}},
		{"nothing changed", []leaderboard.Entry{e(0, "a", 3), e(1, "b", 2)}, []leaderboard.Entry{e(0, "a", 3), e(1, "b", 2)},
			map[string]leaderboard.Move{"a": {Kind: leaderboard.MoveSame, From: 0}, "b": {Kind: leaderboard.MoveSame, From: 1}}},
		{"overtake", []leaderboard.Entry{e(0, "a", 3), e(1, "b", 2)}, []leaderboard.Entry{e(0, "b", 5), e(1, "a", 3)},
			map[string]leaderboard.Move{"b": {Kind: leaderboard.MoveUp, From: 1, ScoreChanged: true}, "a": {Kind: leaderboard.MoveDown, From: 0}}},
		{"new top pushes others down", []leaderboard.Entry{e(0, "a", 3), e(1, "b", 2)}, []leaderboard.Entry{e(0, "n", 9), e(1, "a", 3)},
			map[string]leaderboard.Move{"n": {Kind: leaderboard.MoveNew, From: -1}, "a": {Kind: leaderboard.MoveDown, From: 0}}},
		{"score up, same rank", []leaderboard.Entry{e(0, "a", 3)}, []leaderboard.Entry{e(0, "a", 4)},
			map[string]leaderboard.Move{"a": {Kind: leaderboard.MoveSame, From: 0, ScoreChanged: true}}},
		{"hostile names", []leaderboard.Entry{e(0, "<b>", 1), e(1, "李雷", 1)}, []leaderboard.Entry{e(0, "李雷", 1), e(1, "<b>", 1)},
			map[string]leaderboard.Move{"李雷": {Kind: leaderboard.MoveUp, From: 1}, "<b>": {Kind: leaderboard.MoveDown, From: 0}}},
		{"empty", []leaderboard.Entry{e(0, "a", 1)}, nil, map[string]leaderboard.Move{}},
	} {
		if got := leaderboard.Moves(tc.prev, tc.cur); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if leaderboard.MoveUp.String() != "up" || leaderboard.MoveNew.String() != "new" {
		t.Error("MoveKind names")
	}
}

func TestActivity(t *testing.T) {
	e := func(rank int64, m string, s float64) leaderboard.Entry {
		return leaderboard.Entry{Rank: rank, Member: m, Score: s}
	}
	t0 := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)
	a := leaderboard.NewActivity()
	last := func(now time.Time, n int) []int {
		pm := a.PerMinute(now)
		if len(pm) != 60 {
			t.Fatalf("%d minutes", len(pm))
		}
		return pm[60-n:]
	}
	base := []leaderboard.Entry{e(0, "a", 3), e(1, "b", 2)}
	a.Observe(nil, base, t0) // first read: nothing to compare with
	if got := last(t0, 1); got[0] != 0 {
		t.Fatalf("first read counted %d", got[0])
	}
	a.Observe(base, base, t0)                                                             // no change
	a.Observe(base, []leaderboard.Entry{e(0, "b", 5), e(1, "a", 3)}, t0)                  // b's score changed; a only moved
	a.Observe([]leaderboard.Entry{}, []leaderboard.Entry{e(0, "x", 1), e(1, "y", 1)}, t0) // an empty board filled
	if got := last(t0, 1); got[0] != 3 {
		t.Fatalf("minute 0: %d changes, want 3", got[0])
	}
	t1 := t0.Add(time.Minute)
	a.Observe(base, []leaderboard.Entry{e(0, "n", 9), e(1, "a", 3)}, t1) // n new
	a.Add(4, t1.Add(20*time.Second))
	if got := last(t1, 3); !reflect.DeepEqual(got, []int{0, 3, 5}) {
		t.Fatalf("last 3 minutes at t1: %v", got)
	}
	if got := last(t1.Add(2*time.Minute), 4); !reflect.DeepEqual(got, []int{3, 5, 0, 0}) {
		t.Fatalf("two quiet minutes later: %v", got)
	}
	// An hour later minute 0 has left the chart; its slot is reused.
	t60 := t0.Add(60 * time.Minute)
	pm := a.PerMinute(t60)
	if pm[0] != 5 || pm[59] != 0 || lbSum(pm) != 5 {
		t.Fatalf("an hour later: %v", pm)
	}
	a.Add(1, t60)
	if pm := a.PerMinute(t60); pm[59] != 1 || lbSum(pm) != 6 {
		t.Fatalf("slot reused: %v", pm)
	}
	a.Add(7, t0) // older than the hour the slot holds: dropped
	if pm := a.PerMinute(t60); lbSum(pm) != 6 {
		t.Fatalf("stale add counted: %v", pm)
	}
	if pm := a.PerMinute(t60.Add(2 * time.Hour)); lbSum(pm) != 0 {
		t.Fatalf("two hours later: %v", pm)
	}

	// Concurrent pollers and readers (run with -race).
	b := leaderboard.NewActivity()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				b.Observe(base, []leaderboard.Entry{e(0, "a", float64(i*1000+j)+0.5)}, t0)
				_ = b.PerMinute(t0)
			}
		}()
	}
	wg.Wait()
	if got := b.PerMinute(t0)[59]; got != 800 {
		t.Fatalf("concurrent observes: %d, want 800", got)
	}
}

func lbSum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
