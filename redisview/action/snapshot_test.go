package action

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
)

// value reads a key's content in a form that compares by meaning (a hash
// rebuilt field by field may list its fields in another order).
func value(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	ctx := t.Context()
	switch typ := c.Type(ctx, key).Val(); typ {
	case "none":
		return "absent"
	case "string":
		return "string:" + c.Get(ctx, key).Val()
	case "hash":
		m := c.HGetAll(ctx, key).Val()
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kv = append(kv, fmt.Sprintf("%q=%q", k, m[k]))
		}
		return "hash:" + strings.Join(kv, ",")
	case "list":
		return fmt.Sprintf("list:%q", c.LRange(ctx, key, 0, -1).Val())
	case "set":
		return fmt.Sprintf("set:%q", slices.Sorted(slices.Values(c.SMembers(ctx, key).Val())))
	case "zset":
		return fmt.Sprintf("zset:%v", c.ZRangeWithScores(ctx, key, 0, -1).Val())
	default:
		return typ
	}
}

// seedTypes writes one key of each type the snapshot path records, with
// bytes that are not UTF-8 and a TTL on some.
func seedTypes(t *testing.T, c *redis.Client) map[string]time.Duration {
	t.Helper()
	ctx := t.Context()
	keys := map[string]time.Duration{"t:string": time.Hour, "t:hash": 2 * time.Hour, "t:list": 0, "t:set": time.Hour, "t:zset": 0}
	err := c.Del(ctx, slices.Collect(maps.Keys(keys))...).Err()
	if err == nil {
		err = c.Set(ctx, "t:string", "v\xff\x00", 0).Err()
	}
	if err == nil {
		err = c.HSet(ctx, "t:hash", "f\xff", "1", "score", "4096", "empty", "").Err()
	}
	if err == nil {
		err = c.RPush(ctx, "t:list", "b", "a", "b", "\xfe").Err()
	}
	if err == nil {
		err = c.SAdd(ctx, "t:set", "m1", "m\xff", "42").Err()
	}
	if err == nil {
		err = c.ZAdd(ctx, "t:zset", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -3, Member: "b\xff"}, redis.Z{Score: 1e21, Member: "c"}).Err()
	}
	for k, ttl := range keys {
		if err == nil && ttl > 0 {
			err = c.Expire(ctx, k, ttl).Err()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Every type round-trips through delete → undo and set-ttl → undo — with
// DUMP, with a user that may not DUMP or RESTORE (snapshots), and on the
// embedded demo's server, whose DUMP is not Redis's format.
func TestPriorStateRoundTrips(t *testing.T) {
	f := setup(t, Options{})
	if err := f.db(0).Do(f.ctx, "acl", "setuser", "nodump", "on", ">pw", "~*", "&*", "+@all", "-dump", "-restore").Err(); err != nil {
		t.Fatal(err)
	}
	d, err := demo.Start(f.ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	demoURL := d.Connections()[0].URL + "/13" // eIsland's DB 13: the simulator leaves t:* alone
	demoOpts, _ := redis.ParseURL(demoURL)
	demoOpts.DisableIdentity = true
	for _, path := range []struct {
		name, url string
		data      *redis.Client
		snapshot  bool
	}{
		{"dump", f.target.URL(0), f.db(0), false},
		{"acl-without-dump", fmt.Sprintf("redis://nodump:pw@%s/0", f.target.Addr), f.db(0), true},
		{"embedded-demo", demoURL, redis.NewClient(demoOpts), true},
	} {
		t.Run(path.name, func(t *testing.T) {
			f.conn = f.open(path.url)
			c := path.data
			db := 0
			if path.name == "embedded-demo" {
				db = 13
			}
			keys := seedTypes(t, c)
			for _, key := range slices.Sorted(maps.Keys(keys)) {
				want := value(t, c, key)
				for _, act := range []Request{f.req(db, key), f.req(db, key, "ttl", "7d")} {
					kind := "delete-key"
					if act.Args != nil {
						kind = "set-ttl"
					}
					f.mustRun(admin, kind, act)
					recs := f.records()
					intent := recs[len(recs)-2]
					if got := intent.Targets[0].Snapshot != nil; got != path.snapshot {
						t.Fatalf("%s %s: snapshot recorded %v, want %v", kind, key, got, path.snapshot)
					}
					f.mustRun(admin, "undo", UndoRequest(f.last()))
					if got := value(t, c, key); got != want {
						t.Fatalf("%s %s: after undo %s, want %s", kind, key, got, want)
					}
					pttl := c.PTTL(f.ctx, key).Val()
					if ttl := keys[key]; (ttl == 0 && pttl != -1) || (ttl > 0 && (pttl > ttl || pttl < ttl-time.Minute)) {
						t.Fatalf("%s %s: TTL after undo %v, want %v", kind, key, pttl, ttl)
					}
				}
			}
			// A change between preview and confirm is refused.
			pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(db, "t:hash"))
			if err != nil {
				t.Fatal(err)
			}
			c.HSet(f.ctx, "t:hash", "new", "field")
			_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
			wantErr(t, err, ErrChanged, "")
			if c.Exists(f.ctx, "t:hash").Val() != 1 {
				t.Fatal("deleted a changed key")
			}
		})
	}
}
