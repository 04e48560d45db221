package demo

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

// OBJECT ENCODING, which miniredis lacks, answers as Redis does for the
// same shapes, in the database the client selected; a missing key is nil.
// Lists follow Redis 7.2+ (listpack while small), as the demo's version
// says; the real server's list answer depends on its version.
func TestObjectEncodingLikeRedis(t *testing.T) {
	ctx := context.Background()
	th := startHost(t)
	rs := redistest.Start(t)
	long := strings.Repeat("x", 65)
	for name, c := range map[string]*redis.Client{"demo": th.client(7, 2), "redis": rs.Client(7)} {
		c.Set(ctx, "int", "-123", 0)
		c.Set(ctx, "emb", strings.Repeat("e", 44), 0)
		c.Set(ctx, "raw", strings.Repeat("r", 45), 0)
		c.Set(ctx, "lead0", "0123", 0)
		c.HSet(ctx, "hsmall", "a", "1")
		c.HSet(ctx, "hlong", "a", long)
		c.SAdd(ctx, "sint", 1, 2, 3)
		c.SAdd(ctx, "sstr", "a", "b")
		c.SAdd(ctx, "slong", "a", long)
		c.ZAdd(ctx, "zsmall", redis.Z{Score: 1, Member: "a"})
		for i := range 600 {
			c.HSet(ctx, "hmany", i, i)
		}
		for i := range 200 {
			c.HSet(ctx, "hmid", i, i)
			c.ZAdd(ctx, "zmany", redis.Z{Score: float64(i), Member: i})
			c.SAdd(ctx, "smanyint", i)
		}
		for i := range 600 {
			c.SAdd(ctx, "shugeint", i)
		}
		c.RPush(ctx, "lbig", strings.Repeat("l", 9000))
		c.XAdd(ctx, &redis.XAddArgs{Stream: "x", Values: []string{"a", "1"}})
		want := map[string]string{"int": "int", "emb": "embstr", "raw": "raw", "lead0": "embstr",
			"hsmall": "listpack", "hlong": "hashtable", "hmany": "hashtable", "hmid": "listpack",
			"sint": "intset", "sstr": "listpack", "slong": "hashtable", "smanyint": "intset", "shugeint": "hashtable",
			"zsmall": "listpack", "zmany": "skiplist", "lbig": "quicklist", "x": "stream"}
		if name == "redis" && redisMajorMinor(ctx, c) < 72 {
			want["sstr"] = "hashtable" // sets became listpacks in 7.2
		}
		for k, w := range want {
			if got, err := c.ObjectEncoding(ctx, k).Result(); err != nil || got != w {
				t.Errorf("%s: OBJECT ENCODING %s = %q, %v; want %q", name, k, got, err, w)
			}
		}
		if err := c.ObjectEncoding(ctx, "missing").Err(); err != redis.Nil {
			t.Errorf("%s: OBJECT ENCODING of a missing key: %v, want nil", name, err)
		}
	}
	// The demo answers from the database selected: 7 holds "int", 0 does not.
	if err := th.client(0, 2).ObjectEncoding(ctx, "int").Err(); err != redis.Nil {
		t.Errorf("demo db 0: %v, want nil", err)
	}
}

func redisMajorMinor(ctx context.Context, c *redis.Client) int {
	info := c.Info(ctx, "server").Val()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "redis_version:"); ok {
			p := strings.Split(v, ".")
			if len(p) >= 2 && len(p[0]) == 1 && len(p[1]) == 1 {
				return int(p[0][0]-'0')*10 + int(p[1][0]-'0')
			}
		}
	}
	return 0
}
