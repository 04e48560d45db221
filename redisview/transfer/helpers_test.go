package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/transfer"
)

// small pages and chunks, so that every key of the tests is read in
// several pages.
var smallPages = transfer.ReadLimits{Page: 7, Chunk: 10, MaxElements: 100_000, MaxBytes: 8 << 20}

// exportAll exports every key of c (MATCH *) and returns the lines.
func exportAll(t testing.TB, c redis.UniversalClient, lim transfer.ReadLimits, withhold func(string) string) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := transfer.Export{Reader: &transfer.Reader{C: c, Limits: lim, Withhold: withhold}, Select: transfer.Selection{Pattern: "*"}, Count: 50}
	if _, err := e.Run(context.Background(), &buf); err != nil {
		t.Fatalf("export: %v", err)
	}
	return buf.Bytes()
}

// importAll writes every line with a value into c.
func importAll(t testing.TB, c redis.UniversalClient, file []byte) []transfer.Record {
	t.Helper()
	recs, err := transfer.ReadAll(bytes.NewReader(file), transfer.DefaultLimits)
	if err != nil {
		t.Fatalf("read back the export: %v", err)
	}
	for _, r := range recs {
		if !r.HasValue() {
			continue
		}
		if err := transfer.Write(context.Background(), c, r); err != nil {
			t.Fatalf("write %q: %v", r.Key, err)
		}
	}
	return recs
}

// typed is a key as Redis's own whole-value reads give it (test data is
// small): its type, value in canonical text and TTL.
func typed(t testing.TB, c redis.UniversalClient, key string) (string, time.Duration) {
	t.Helper()
	ctx := context.Background()
	typ := c.Type(ctx, key).Val()
	ttl := c.PTTL(ctx, key).Val()
	var v any
	var err error
	switch typ {
	case "string":
		v, err = c.Get(ctx, key).Result()
	case "hash":
		var m map[string]string
		m, err = c.HGetAll(ctx, key).Result()
		v = sortedMap(m)
	case "list":
		v, err = c.LRange(ctx, key, 0, -1).Result()
	case "set":
		var ms []string
		ms, err = c.SMembers(ctx, key).Result()
		slices.Sort(ms)
		v = ms
	case "zset":
		v, err = c.Do(ctx, "zrange", key, 0, -1, "withscores").Result() // scores as Redis prints them
	case "stream":
		var xs, info any
		xs, err = c.Do(ctx, "xrange", key, "-", "+").Result()
		info = c.XInfoStream(ctx, key).Val().LastGeneratedID
		v = []any{xs, info}
	}
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return fmt.Sprintf("%s %q", typ, v), ttl
}

func sortedMap(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"\x00="+v)
	}
	slices.Sort(out)
	return out
}

// keysOf lists a small database's keys (SCAN, sorted).
func keysOf(t testing.TB, c redis.UniversalClient) []string {
	t.Helper()
	var keys []string
	iter := c.Scan(context.Background(), 0, "*", 100).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// sameDatabases checks that b holds exactly a's keys with the same typed
// values, and TTLs within a second of the source's, plus the time since
// the export began (exported: the TTL then, so the import runs longer by
// what the round trip took, seconds on a loaded machine).
func sameDatabases(t testing.TB, a, b redis.UniversalClient, exported time.Time) {
	t.Helper()
	ka, kb := keysOf(t, a), keysOf(t, b)
	if !slices.Equal(ka, kb) {
		t.Fatalf("keys differ:\n%q\n%q", ka, kb)
	}
	for _, k := range ka {
		va, ta := typed(t, a, k)
		vb, tb := typed(t, b, k)
		if va != vb {
			t.Errorf("key %q:\n source %s\n import %s", k, cut(va), cut(vb))
		}
		if (ta < 0) != (tb < 0) || tb-ta > time.Since(exported)+time.Second || ta-tb > time.Second {
			t.Errorf("key %q: TTL %v at the source, %v imported", k, ta, tb)
		}
	}
}

func cut(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

func sortedStrings(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
