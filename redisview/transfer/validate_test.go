package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// Every line Redis would refuse part-way through its writes (after the
// DEL that clears the key) is refused when the file is read, naming the
// line: stream IDs out of order, repeated, out of range or 0-0, a last
// ID below the last entry, a TTL Redis cannot add to its clock, more
// elements than a key may have, text that is not UTF-8 or an escape of
// a lone surrogate.
func TestReadAllRefusesWhatRedisWouldRefuse(t *testing.T) {
	stream := func(v string) string { return `{"key":"s","type":"stream","ttl_ms":null,"value":` + v + `}` }
	for _, tt := range []struct{ line, says string }{
		{stream(`{"entries":[{"id":"2-0","fields":[["a","b"]]},{"id":"1-0","fields":[["a","b"]]}]}`), "IDs must grow"},
		{stream(`{"entries":[{"id":"2-0","fields":[["a","b"]]},{"id":"2-0","fields":[["a","b"]]}]}`), "IDs must grow"},
		{stream(`{"entries":[{"id":"0-0","fields":[["a","b"]]}]}`), "above 0-0"},
		{stream(`{"entries":[{"id":"99999999999999999999-1","fields":[["a","b"]]}]}`), "at most"},
		{stream(`{"entries":[{"id":"5-0","fields":[["a","b"]]}],"last_id":"4-9"}`), "below the last entry"},
		{stream(`{"entries":[],"last_id":"99999999999999999999-0"}`), "at most"},
		{`{"key":"k","type":"string","ttl_ms":4611686018427387905,"value":"v"}`, "ttl_ms"},
		{`{"key":"k","type":"set","value":[` + strings.Repeat(`"m",`, transfer.MaxElements) + `"m"]}`, "at most 1000000"},
		{"{\"key\":\"a\xff\",\"type\":\"string\",\"value\":\"v\"}", "UTF-8"},
		{`{"key":"a\udc80","type":"string","value":"v"}`, "surrogate"},
	} {
		_, err := transfer.ReadAll(strings.NewReader(`{"key":"x","type":"string","value":"\ufffd�"}`+"\n"+tt.line), transfer.DefaultLimits)
		if err == nil || !strings.Contains(err.Error(), "line 2: ") || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%.120s: %.300v, want line 2 saying %q", tt.line, err, tt.says)
		}
	}
	ok := `{"key":"s","type":"stream","value":{"entries":[{"id":"1-5","fields":[["a","b"]]},{"id":"1-6","fields":[["a","b"]]},{"id":"18446744073709551615-0","fields":[["a","b"]]}]}}`
	if _, err := transfer.ParseLine([]byte(ok)); err != nil {
		t.Errorf("growing IDs refused: %v", err)
	}
}

// Export writes, and import recreates exactly, what SCAN finds: a key
// named "", an empty stream made by XGROUP CREATE … MKSTREAM (last ID
// 0-0, which XADD refuses) and one emptied by XDEL (last ID kept), a
// TTL past the 292 years a Duration holds.
func TestRoundTripEdgeKeys(t *testing.T) {
	ctx := context.Background()
	src, dst := redistest.Start(t), redistest.Start(t)
	a, b := src.Client(0), dst.Client(0)
	a.Set(ctx, "", "empty-name", 0)
	a.XGroupCreateMkStream(ctx, "queue", "workers", "$")
	a.XGroupDestroy(ctx, "queue", "workers")
	a.XAdd(ctx, &redis.XAddArgs{Stream: "drained", ID: "7-3", Values: []string{"f", "v"}})
	a.XDel(ctx, "drained", "7-3")
	a.Set(ctx, "far", "v", 0)
	a.Do(ctx, "pexpireat", "far", int64(2e13))
	file := exportAll(t, a, transfer.DefaultReadLimits, nil)
	importAll(t, b, file)
	for _, k := range []string{"", "queue", "drained"} {
		if b.Exists(ctx, k).Val() != 1 {
			t.Errorf("%q not imported:\n%s", k, file)
		}
	}
	for _, k := range []string{"queue", "drained"} {
		x, y := a.XInfoStream(ctx, k).Val(), b.XInfoStream(ctx, k).Val()
		if x.Length != y.Length || x.LastGeneratedID != y.LastGeneratedID {
			t.Errorf("%s: %d %s, want %d %s", k, y.Length, y.LastGeneratedID, x.Length, x.LastGeneratedID)
		}
	}
	if got, want := b.Get(ctx, "").Val(), "empty-name"; got != want {
		t.Errorf(`"" = %q`, got)
	}
	was, _ := a.Do(ctx, "pttl", "far").Int64()
	got, _ := b.Do(ctx, "pttl", "far").Int64()
	if d := was - got; d < -1000 || d > 1000 {
		t.Errorf("far: PTTL %d, want about %d", got, was)
	}
	// Read twice (a rehash), a key's line is the same: import drops the repeat.
	twice := bytes.Repeat(file, 2)
	if recs, err := transfer.ReadAll(bytes.NewReader(twice), transfer.DefaultLimits); err != nil || len(recs) != bytes.Count(file, []byte("\n")) {
		t.Errorf("a repeated identical line: %d %v", len(recs), err)
	}
}

// A key whose value matches the line but whose TTL does not (none in
// the file, 5 s in Redis; or the other way) is overwritten, so that it
// gets the file's TTL, not left to expire.
func TestIdenticalNeedsTheTTL(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(0)
	c.Set(ctx, "expiring", "same", 5*time.Second)
	c.Set(ctx, "lasting", "same", 0)
	c.Set(ctx, "both", "same", time.Hour)
	rd := &transfer.Reader{C: c}
	for key, want := range map[string]transfer.Class{"expiring": transfer.Overwritten, "lasting": transfer.Overwritten, "both": transfer.Identical} {
		ttl := "null"
		if key != "expiring" {
			ttl = fmt.Sprint(time.Hour.Milliseconds())
		}
		r, err := transfer.ParseLine([]byte(`{"key":"` + key + `","type":"string","ttl_ms":` + ttl + `,"value":"same"}`))
		if err != nil {
			t.Fatal(err)
		}
		v, err := transfer.Classify(ctx, rd, r)
		if err != nil || v.Class != want || v.TTLDiffers != (want == transfer.Overwritten) {
			t.Errorf("%s: %+v %v, want %s", key, v, err, want)
		}
	}
}
