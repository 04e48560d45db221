package stats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// A key the server would not let Keydeck read is not "absent": the error
// says what happened (permission denied, authentication failed).
func TestInspectKeyReportsReadErrors(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	admin := rs.Client(0)
	if err := admin.Do(ctx, "acl", "setuser", "narrow", "on", ">pw", "~acl:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "outside", "v", 0)
	admin.Set(ctx, "acl:inside", "v", 0)
	for _, c := range []struct {
		url, key, want string
	}{
		{fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr), "outside", "not permitted"},
		{fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr), "definitely-not-there", "not permitted"},
		{fmt.Sprintf("redis://narrow:wrong@%s/0", rs.Addr), "acl:inside", "authentication failed"},
	} {
		conn := openConn(t, c.url)
		_, _, err := InspectKey(ctx, conn, 0, c.key)
		if err == nil || !errors.Is(err, redisview.ErrRead) {
			t.Fatalf("%s %s: err %v, want redisview.ErrRead", c.url, c.key, err)
		}
		if got := err.Error(); !strings.Contains(got, c.want) {
			t.Fatalf("%s: %q does not say %q", c.key, got, c.want)
		}
	}
	conn := openConn(t, fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr))
	info, _, err := InspectKey(ctx, conn, 0, "acl:inside")
	if err != nil || info.Type != "string" {
		t.Fatalf("allowed key: %+v %v", info, err)
	}
	info, _, err = InspectKey(ctx, conn, 0, "acl:gone")
	if err != nil || info.Type != "" {
		t.Fatalf("absent allowed key: %+v %v", info, err)
	}
}

// A big hash or set encoded as a hash table gets no MEMORY USAGE (whose
// bucket walk takes milliseconds on a half-rehashed table): its memory is
// estimated from a sample, within a quarter of what MEMORY USAGE SAMPLES 0
// says; a small one is measured as before.
func TestInspectKeyEstimatesBigHashTables(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	db := rs.Client(0)
	fill := `for i = 1, tonumber(ARGV[2]) do
  if ARGV[1] == 'hash' then redis.call('HSET', KEYS[1], 'field:' .. i, 'value-of-some-length:' .. i)
  else redis.call('SADD', KEYS[1], 'member-of-a-set:' .. i) end
end
return 1`
	if err := db.Eval(ctx, fill, []string{"h"}, "hash", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Eval(ctx, fill, []string{"s"}, "set", 60000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Eval(ctx, fill, []string{"small"}, "hash", 500).Err(); err != nil {
		t.Fatal(err)
	}
	conn := openConn(t, rs.URL(0))
	for _, k := range []string{"h", "s"} {
		info, why, err := InspectKey(ctx, conn, 0, k)
		if err != nil || !info.MemoryEstimated || info.Elements != 60000 {
			t.Fatalf("%s: %+v %q %v", k, info, why, err)
		}
		exact, err := db.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ratio := float64(info.Memory) / float64(exact); ratio < 0.75 || ratio > 1.25 {
			t.Errorf("%s: estimate %d, MEMORY USAGE SAMPLES 0 %d", k, info.Memory, exact)
		}
	}
	if info, _, err := InspectKey(ctx, conn, 0, "small"); err != nil || info.MemoryEstimated || info.Memory <= 0 {
		t.Fatalf("small hash table: %+v %v", info, err)
	}
	// Without scripts there is no sample: memory is unknown, and says why.
	if err := db.Do(ctx, "ACL", "SETUSER", "noscript", "on", ">pw", "~*", "+@all", "-@scripting").Err(); err != nil {
		t.Fatal(err)
	}
	nc := openConn(t, fmt.Sprintf("redis://noscript:pw@%s/0", rs.Addr))
	nc.Scripts().Set(redisview.ScriptRefused, "refused", time.Now())
	if info, why, err := InspectKey(ctx, nc, 0, "h"); err != nil || info.Memory != -1 || !strings.Contains(why, "not measured") {
		t.Fatalf("without scripts: %+v %q %v", info, why, err)
	}
}
