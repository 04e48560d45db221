package decode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

var t0 = time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)

func greedy(capacity, tokens int64, per time.Duration, id string) demo.Bandwidth {
	return demo.Bandwidth{Capacity: capacity, InitialTokens: capacity, RefillPeriodNanos: int64(per), RefillTokens: tokens, TimeOfFirstRefillMillis: demo.NotAligned, ID: id}
}

// A one-bandwidth greedy bucket (107 bytes, format 1) refills at read time;
// two bandwidths with ids (one intervally, format 2 with a version) give
// the least of them; a refill over decades does not overflow.
func TestBucket4jDecodes(t *testing.T) {
	one := demo.EncodeBucketState(demo.BucketState{Format: 1, Bandwidths: []demo.Bandwidth{greedy(100, 100, time.Minute, "")},
		States: []demo.BandwidthState{{LastRefillNanos: t0.UnixNano(), Tokens: 10}}, ConsumedTokens: 90})
	if len(one) != 107 {
		t.Fatalf("one bandwidth: %d bytes", len(one))
	}
	b, err := decode.DecodeBucket4j(one, t0.Add(30*time.Second))
	if err != nil || b.Tokens != 60 || b.ToFull != 24*time.Second || b.Consumed != 90 || b.ClockSkew || len(b.Bandwidths) != 1 ||
		b.Bandwidths[0].Capacity != 100 || b.Bandwidths[0].Stored != 10 || !b.Bandwidths[0].LastRefill.Equal(t0) {
		t.Fatalf("greedy: %+v %v", b, err)
	}
	// Before the last refill (clock skew): the stored size.
	if b, _ = decode.DecodeBucket4j(one, t0.Add(-time.Second)); b.Tokens != 10 {
		t.Fatalf("before last refill: %+v", b)
	}

	iv := greedy(10, 5, time.Second, "per-second")
	iv.Intervally = true
	two := demo.EncodeBucketState(demo.BucketState{Format: 2, Bandwidths: []demo.Bandwidth{greedy(1000, 1000, time.Hour, "hourly \u00e9\x00"), iv},
		States:           []demo.BandwidthState{{LastRefillNanos: t0.UnixNano(), Tokens: 500}, {LastRefillNanos: t0.UnixNano(), Tokens: -2}},
		HasConfigVersion: true, ConfigVersion: 7})
	b, err = decode.DecodeBucket4j(two, t0.Add(1500*time.Millisecond))
	if err != nil || b.Tokens != 3 || !b.HasVersion || b.Version != 7 || b.Bandwidths[0].ID != "hourly \u00e9\x00" || b.Bandwidths[1].Tokens != 3 ||
		b.Bandwidths[1].ToFull != 1500*time.Millisecond || b.Bandwidths[0].Tokens != 500 {
		t.Fatalf("two bandwidths: %+v %v", b, err)
	}
	// Decades of greedy refill at a huge rate: T·elapsed overflows int64.
	huge := demo.EncodeBucketState(demo.BucketState{Format: 1, Bandwidths: []demo.Bandwidth{greedy(1<<40, 1<<40, time.Nanosecond, "")},
		States: []demo.BandwidthState{{LastRefillNanos: 0, Tokens: 0}}})
	if b, err = decode.DecodeBucket4j(huge, t0); err != nil || b.Tokens != 1<<40 || !b.ClockSkew {
		t.Fatalf("huge: %+v %v", b, err)
	}
}

// Anything off the documented layout is refused, never guessed.
func TestBucket4jRefusesUnknownLayouts(t *testing.T) {
	good := demo.EncodeBucketState(demo.BucketState{Format: 1, Bandwidths: []demo.Bandwidth{greedy(100, 100, time.Minute, "")},
		States: []demo.BandwidthState{{LastRefillNanos: t0.UnixNano(), Tokens: 10}}})
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := map[string][]byte{
		"trailing byte": append(append([]byte(nil), good...), 0),
		"truncated":     good[:len(good)-1],
		"format 3":      mut(func(b []byte) []byte { b[3] = 3; return b }),
		"boolean 2":     mut(func(b []byte) []byte { b[12+4+32] = 2; return b }),
		"empty":         {},
		"text":          []byte("hello"),
	}
	for name, v := range cases {
		if _, err := decode.DecodeBucket4j(v, t0); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	// Through Decode: the note says the length, nothing else.
	rs := redistest.Start(t)
	ctx := context.Background()
	db := rs.Client(0)
	m := schema.Match{Family: schema.BuiltinPack("vertique").Families[0]}
	if m.Family.Role != schema.RoleBucket4j {
		t.Fatalf("vertique's first family is %s", m.Family.Role)
	}
	db.Set(ctx, "b", cases["trailing byte"], time.Minute)
	r, err := decode.Decode(ctx, db, m, "b", t0)
	if err != nil || decode.As[decode.Bucket4j](r) != nil || !strings.Contains(r.Note, "unrecognised state (108 bytes)") {
		t.Fatalf("unknown layout: %+v %v", r, err)
	}
	db.Set(ctx, "b", good, time.Minute)
	if r, err = decode.Decode(ctx, db, m, "b", t0.Add(time.Minute)); err != nil || decode.As[decode.Bucket4j](r) == nil || decode.As[decode.Bucket4j](r).Tokens != 100 || decode.As[decode.Bucket4j](r).TTL <= 0 {
		t.Fatalf("good state: %+v %v", r, err)
	}
}
