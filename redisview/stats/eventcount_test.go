package stats

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/schema"
)

func TestCountableFlags(t *testing.T) {
	tests := []struct {
		flags  string
		ok     bool
		hidden bool
		why    string // a part of why
	}{
		{"gxenK", true, false, ""},
		{"Kgxen", true, false, ""},
		{"AKEn", true, false, ""}, // as set; Redis reads it back "AKE"
		{"gxetnKE", true, false, ""},
		{"", false, false, "CONFIG SET notify-keyspace-events Kgxen keeps"},
		{"AKE", false, true, "CONFIG SET notify-keyspace-events AKEn turns n on"},
		{"AK", false, true, "does not show n"},
		{"gxeK", false, false, `notify-keyspace-events is "gxeK", without n (new keys): CONFIG SET notify-keyspace-events gxeKn keeps`},
		{"AE", false, false, "without K (keyspace channels), n (new keys): CONFIG SET notify-keyspace-events AEKn keeps"},
		{"gxenE", false, false, "without K (keyspace channels): CONFIG SET notify-keyspace-events gxenEK keeps"},
		{"nK", false, false, "without g (DEL, RENAME, MOVE), x (expiries), e (evictions): CONFIG SET notify-keyspace-events nKgxe keeps"},
		{"$lshzxK", false, false, "without g (DEL, RENAME, MOVE), e (evictions), n (new keys): CONFIG SET notify-keyspace-events $lshzxKgen keeps"},
	}
	for _, tt := range tests {
		ok, why := CountableFlags(tt.flags)
		if ok != tt.ok || NewHidden(tt.flags) != tt.hidden || !strings.Contains(why, tt.why) || ok != (why == "") {
			t.Errorf("CountableFlags(%q) = %v %q (hidden %v)", tt.flags, ok, why, NewHidden(tt.flags))
		}
	}
}

// The CONFIG SET line CountableFlags names is one redis-server 7.0
// accepts, and the flags it then reads back count — or, with A, hide n,
// which is then on: a new key is published as "new".
func TestCountableFlagsLinesWorkOnRedis(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	db := s.Client(0)
	for _, start := range []string{"", "gxeK", "AE", "gxenE", "nK", "gnK", "$lshzxK", "KA"} {
		ok, why := CountableFlags(start)
		if ok {
			t.Fatalf("%q counts", start)
		}
		_, rest, found := strings.Cut(why, "CONFIG SET notify-keyspace-events ")
		if !found {
			t.Fatalf("%q: no line in %q", start, why)
		}
		line := strings.Fields(rest)[0]
		if err := db.ConfigSet(ctx, "notify-keyspace-events", line).Err(); err != nil {
			t.Fatalf("%q: CONFIG SET %q: %v", start, line, err)
		}
		m, err := db.ConfigGet(ctx, "notify-keyspace-events").Result()
		if err != nil {
			t.Fatal(err)
		}
		got := m["notify-keyspace-events"]
		if ok, why := CountableFlags(got); !ok && !NewHidden(got) {
			t.Errorf("%q: CONFIG SET %q reads back %q: %s", start, line, got, why)
		}
		// n is on: a new key is published as "new".
		ps := db.PSubscribe(ctx, "__keyspace@0__:*")
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		key := "new:" + start
		if err := db.Set(ctx, key, 1, 0).Err(); err != nil {
			t.Fatal(err)
		}
		m1, err := ps.ReceiveMessage(ctx)
		if err != nil || m1.Payload != "new" || m1.Channel != "__keyspace@0__:"+key {
			t.Errorf("%q: after CONFIG SET %q the first event is %+v (%v)", start, line, m1, err)
		}
		ps.Close()
	}
}

func testClassifier(t *testing.T) func() *schema.Classifier {
	t.Helper()
	pack, err := schema.Load("livecounts.yaml", []byte(liveCountsPack))
	if err != nil {
		t.Fatal(err)
	}
	cl := pack.Classifier()
	return func() *schema.Classifier { return cl }
}

func wantLive(t *testing.T, l *liveCounts, want bool, part string) {
	t.Helper()
	ok, _, why := l.Live()
	if ok != want || !strings.Contains(why, part) {
		t.Fatalf("Live = %v %q, want %v with %q", ok, why, want, part)
	}
}

// Live holds the deltas good only while every event since the Reset was
// heard: a subscription up before it and unbroken, flags that publish
// what counts, no flood given up on.
func TestLiveCountsLive(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 12, 2, 21, 0, 0, 0, time.UTC))
	l := newLiveCounts(0, testClassifier(t), fake)
	wantLive(t, l, false, "no pass has finished yet")
	l.Event(0, "a:1", "new") // before any pass: nothing to add it to
	l.Subscribed(true)
	l.Reset()
	if _, _, total := l.Deltas(); total != 0 {
		t.Fatalf("an event before the first pass counted: %d", total)
	}
	wantLive(t, l, false, "not been read")
	l.Flags("gxenK", "")
	wantLive(t, l, true, "")
	if _, since, _ := l.Live(); !since.Equal(fake.Now()) {
		t.Fatalf("since %v, the Reset was at %v", since, fake.Now())
	}

	// The subscription breaks: lost until a Reset after it is back.
	fake.Advance(time.Minute)
	l.Subscribed(false)
	wantLive(t, l, false, "not subscribed")
	fake.Advance(time.Second)
	l.Subscribed(true)
	wantLive(t, l, false, "followed only since 21:01:01")
	l.Reset()
	wantLive(t, l, true, "")

	// Events turned off and on again between two reads: spoiled until
	// the next Reset.
	l.Flags("", "")
	wantLive(t, l, false, "keyspace notifications are off")
	l.Flags("gxenK", "")
	wantLive(t, l, false, "off during part of the time")
	l.Reset()
	wantLive(t, l, true, "")

	// CONFIG GET refused: which events are published is unknown, also
	// once a new key is heard.
	l.Flags("", "CONFIG GET is not permitted")
	l.Event(0, "a:3", "new")
	wantLive(t, l, false, "is unknown (CONFIG GET is not permitted)")
	l.Reset()
	wantLive(t, l, false, "is unknown (CONFIG GET is not permitted)")
	l.Flags("gxenK", "")
	l.Reset()
	wantLive(t, l, true, "")

	// n hidden behind A: live once a new key is heard.
	l.Flags("AKE", "")
	l.Reset()
	wantLive(t, l, false, "does not show n")
	l.Event(0, "a:1", "del")
	wantLive(t, l, false, "does not show n")
	l.Event(0, "a:2", "new")
	wantLive(t, l, true, "")
	if fam, unm, total := l.Deltas(); total != 0 || unm != 0 || len(fam) != 0 {
		t.Fatalf("deltas %v %d %d after one key gone and one new", fam, unm, total)
	}
	// A new subscription must hear one again.
	l.Subscribed(false)
	l.Subscribed(true)
	l.Reset()
	wantLive(t, l, false, "does not show n")
}

// Deltas by family, of no family, and in all, and Unsure for a "new"
// followed by its rename_to, copy_to or restore (also when other keys'
// events come between, as a cluster's nodes interleave them).
func TestLiveCountsDeltas(t *testing.T) {
	l := newLiveCounts(0, testClassifier(t), clock.NewFake(time.Time{}))
	l.Reset()
	for _, e := range [][2]string{
		{"a:1", "new"}, {"a:1", "set"}, {"a:2", "new"}, {"b:1", "new"}, {"zz", "new"},
		{"a:2", "expired"}, {"b:1", "evicted"}, {"a:9", "rename_from"}, {"b:9", "new"}, {"zz", "set"}, {"b:9", "rename_to"},
		{"", "new"}, {"", "copy_to"}, {"", "restore"}, // the empty name is a key too; one restore per new
		{"a:m", "move_from"}, {"a:x", "move_to"}, {"a:y", "restore"},
	} {
		l.Event(0, e[0], e[1])
	}
	l.Event(1, "a:5", "new") // another database
	fam, unm, total := l.Deltas()
	got := map[string]int64{}
	for f, d := range fam {
		got[f.ID] = d
	}
	want := map[string]int64{"fam-a": -1, "fam-b": 1}
	if !sameCounts(got, want) || unm != 2 || total != 2 {
		t.Fatalf("deltas %v unmatched %d total %d, want %v 2 2", got, unm, total, want)
	}
	if u := l.Unsure(); u != 2 {
		t.Fatalf("unsure %d, want 2 (b:9's rename_to, the empty name's copy_to)", u)
	}
	l.Reset()
	if fam, unm, total := l.Deltas(); len(fam) != 0 || unm != 0 || total != 0 || l.Unsure() != 0 {
		t.Fatalf("after Reset: %v %d %d unsure %d", fam, unm, total, l.Unsure())
	}
}

// More than maxRate events a second for FloodSeconds seconds in a row:
// the counts stop following them (and say why) until the next Reset;
// at the limit, or with a calmer second between, they go on.
func TestLiveCountsGiveUpOnAFlood(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 12, 2, 21, 0, 0, 0, time.UTC))
	l := newLiveCounts(0, testClassifier(t), fake)
	// Seconds of multiples of clockEvery events: the clock is read at the
	// first event of each.
	l.maxRate = 100 * clockEvery
	l.Subscribed(true)
	l.Flags("Kgxen", "")
	l.Reset()
	second := func(n int) {
		for i := range n {
			l.Event(i%2, fmt.Sprintf("a:%d", i), "new") // every database counts against the limit
		}
		fake.Advance(time.Second)
	}
	at, over := l.maxRate, l.maxRate+clockEvery
	for range 2 * FloodSeconds {
		second(at) // at the limit
	}
	second(over)
	second(over)
	second(at / 2) // a calmer second
	second(over)
	second(over)
	wantLive(t, l, true, "")
	_, _, before := l.Deltas()
	second(over) // the third second in a row over: given up at the first event after it
	second(over)
	wantLive(t, l, false, fmt.Sprintf("more than %d key events per second for 3 s: counts are those of the last pass", l.maxRate))
	// The third second over is counted (half its events are of database
	// 0), none after it.
	if _, _, total := l.Deltas(); total-before != int64(over/2) {
		t.Fatalf("%d events counted since the calm second, want %d", total-before, over/2)
	}
	l.Reset()
	wantLive(t, l, true, "")
	l.Event(0, "a:1", "new")
	if _, _, total := l.Deltas(); total != 1 {
		t.Fatalf("after the Reset: %d", total)
	}
}

func TestDrifted(t *testing.T) {
	tests := []struct {
		expected, actual int64
		want             bool
	}{
		{0, 0, false},
		{10, 10, false},
		{10, 11, true}, // under a thousand keys any difference
		{999, 998, true},
		{1000, 1001, false}, // a thousand: one key is 0.1 %
		{1000, 1002, true},
		{10_010_000, 10_000_000, false}, // ten million: ten thousand keys
		{10_010_001, 10_000_000, true},
		{9_990_000, 10_000_000, false},
		{9_989_999, 10_000_000, true},
		{5, 0, true}, // FLUSHDB
	}
	for _, tt := range tests {
		if got := drifted(tt.expected, tt.actual); got != tt.want {
			t.Errorf("drifted(%d, %d) = %v", tt.expected, tt.actual, got)
		}
	}
	// Keys that may have replaced another are allowed for.
	l := newLiveCounts(0, testClassifier(t), clock.NewFake(time.Time{}))
	l.Reset()
	l.Event(0, "a:1", "new")
	l.Event(0, "a:1", "rename_to")
	l.Event(0, "a:0", "rename_from")
	for _, tt := range []struct {
		info int64
		want bool
	}{{100, false}, {99, false}, {98, true}, {101, true}} {
		if d, _ := l.Drifted(100, tt.info); d != tt.want {
			t.Errorf("pass 100, a rename that may have replaced a key, INFO %d: drifted %v", tt.info, d)
		}
	}
}

func BenchmarkLiveCountsEvent(b *testing.B) {
	pack, err := schema.Load("livecounts.yaml", []byte(liveCountsPack))
	if err != nil {
		b.Fatal(err)
	}
	cl := pack.Classifier()
	l := newLiveCounts(0, func() *schema.Classifier { return cl }, nil)
	l.maxRate = 1 << 62
	l.Reset()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("a:session:%d", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ev := "new"
		if i%2 == 1 {
			ev = "del"
		}
		l.Event(0, keys[i%len(keys)], ev)
	}
}
