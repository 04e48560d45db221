package action

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview/schema"
)

// setBits sets bits of a string to 1, as a ban sets a name's bloom bits: a
// part-level kind for tests (the ban kind itself comes with the bans view).
type setBits struct{}

func (setBits) Name() string    { return "test-set-bits" }
func (setBits) Title() string   { return "Set bits" }
func (setBits) Requires() Level { return Admin }
func (setBits) Args() []Arg     { return []Arg{{Name: "offsets"}, {Name: "item", Data: true}} }
func (setBits) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	var offs []int64
	for _, f := range strings.Split(req.Args["offsets"], ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, invalidf("offsets")
		}
		offs = append(offs, n)
	}
	return bitsPlan{key: req.Key, part: MemberRef{Kind: PartBits, Name: req.Args["item"], Bits: offs}}, nil
}

type bitsPlan struct {
	key  string
	part MemberRef
}

func (p bitsPlan) Keys() []string                { return []string{p.key} }
func (p bitsPlan) Members() map[string]MemberRef { return map[string]MemberRef{p.key: p.part} }
func (p bitsPlan) Describe(states []State) ([]Change, error) {
	return []Change{{Key: p.key, Op: "set-bits", Text: "SET BITS " + memberShape(states[0].Member), Before: states[0]}}, nil
}
func (p bitsPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	for _, off := range p.part.Bits {
		tx.SetBit(ctx, p.key, off, 1)
	}
}

// Each part kind round-trips (act → undo → the same bytes and TTL): a set
// member, a hash field, bloom bits — with DUMP, as a user without DUMP and
// RESTORE (parts never need them), and on the embedded demo server. A
// write to the part between preview and confirm is refused; a write to
// another part of the same key is not.
func TestPartRoundTrips(t *testing.T) {
	f := setup(t, Options{Kinds: []Kind{setBits{}}})
	if err := f.db(0).Do(f.ctx, "acl", "setuser", "nodump", "on", ">pw", "~*", "&*", "+@all", "-dump", "-restore").Err(); err != nil {
		t.Fatal(err)
	}
	d, err := demo.Start(f.ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	demoOpts, _ := redis.ParseURL(d.Connections()[0].URL + "/13")
	demoOpts.DisableIdentity = true
	for _, path := range []struct {
		name, url string
		db        int
		data      *redis.Client
	}{
		{"dump", f.target.URL(0), 0, f.db(0)},
		{"acl-without-dump", fmt.Sprintf("redis://nodump:pw@%s/0", f.target.Addr), 0, f.db(0)},
		{"embedded-demo", d.Connections()[0].URL + "/13", 13, redis.NewClient(demoOpts)},
	} {
		t.Run(path.name, func(t *testing.T) {
			f.conn = f.open(path.url)
			c := path.data
			c.Del(f.ctx, "p:set", "p:hash", "p:bloom", "p:lone")
			c.SAdd(f.ctx, "p:set", "a", "b\xff", "c")
			c.Expire(f.ctx, "p:set", time.Hour)
			c.HSet(f.ctx, "p:hash", "f\xff", "v\x00\xfe", "g", "2")
			c.SetBit(f.ctx, "p:bloom", 1000, 1)
			c.SetBit(f.ctx, "p:bloom", 7, 1)
			c.SAdd(f.ctx, "p:lone", "only")
			c.Expire(f.ctx, "p:lone", 2*time.Hour)
			cases := []struct {
				kind string
				req  Request
			}{
				{KindRemoveSetMember, f.req(path.db, "p:set", ArgMember, "b\xff")},
				{KindRemoveHashField, f.req(path.db, "p:hash", ArgField, "f\xff")},
				{"test-set-bits", f.req(path.db, "p:bloom", "offsets", "7,8,999,1000", "item", "mallory")},
				// The last member: the key goes, and comes back with its TTL.
				{KindRemoveSetMember, f.req(path.db, "p:lone", ArgMember, "only")},
			}
			for _, cs := range cases {
				want := value(t, c, cs.req.Key)
				wantTTL := c.PTTL(f.ctx, cs.req.Key).Val()
				f.mustRun(admin, cs.kind, cs.req)
				if value(t, c, cs.req.Key) == want {
					t.Fatalf("%s: nothing changed", cs.kind)
				}
				recs := f.records()
				if tg := recs[len(recs)-2].Targets[0]; tg.Member == nil || tg.Prior != "" || tg.Snapshot != nil {
					t.Fatalf("%s: not recorded by its part: %+v", cs.kind, tg)
				}
				f.mustRun(admin, "undo", UndoRequest(f.last()))
				if got := value(t, c, cs.req.Key); got != want {
					t.Fatalf("%s: after undo %s, want %s", cs.kind, got, want)
				}
				if pttl := c.PTTL(f.ctx, cs.req.Key).Val(); (wantTTL < 0) != (pttl < 0) || pttl > wantTTL || (wantTTL > 0 && pttl < wantTTL-time.Minute) {
					t.Fatalf("%s: TTL after undo %v, want %v", cs.kind, pttl, wantTTL)
				}
			}

			// Another member written between preview and confirm: no change
			// to the target, so it goes ahead (after retries if need be).
			pv, err := f.r.Preview(f.ctx, admin, f.conn, KindRemoveSetMember, f.req(path.db, "p:set", ArgMember, "a"))
			if err != nil {
				t.Fatal(err)
			}
			c.SAdd(f.ctx, "p:set", "newcomer")
			c.HSet(f.ctx, "p:hash", "g", "3")
			if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
				t.Fatalf("an unrelated member refused the action: %v", err)
			}
			// The target itself changed: refused.
			pv, err = f.r.Preview(f.ctx, admin, f.conn, KindRemoveHashField, f.req(path.db, "p:hash", ArgField, "g"))
			if err != nil {
				t.Fatal(err)
			}
			c.HSet(f.ctx, "p:hash", "g", "4")
			_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
			wantErr(t, err, ErrChanged, `field "g"`)
			if c.HGet(f.ctx, "p:hash", "g").Val() != "4" {
				t.Fatal("a changed field was removed")
			}
		})
	}
}

// A group of keys — a leaderboard entry: the member of the board, its
// metadata hash, its cached high score — round-trips as one action with
// DUMP, without DUMP/RESTORE and on the embedded demo, while the demo's
// simulator keeps writing to other boards of the same database.
func TestGroupRoundTrips(t *testing.T) {
	f := setup(t, Options{})
	if err := f.db(0).Do(f.ctx, "acl", "setuser", "nodump", "on", ">pw", "~*", "&*", "+@all", "-dump", "-restore").Err(); err != nil {
		t.Fatal(err)
	}
	d, err := demo.Start(f.ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	demoOpts, _ := redis.ParseURL(d.Connections()[0].URL + "/14")
	demoOpts.DisableIdentity = true
	const board, member = "mg:score:leaderboard:roundtrip", "rt\xffplayer"
	meta, high := "mg:score:user-meta:roundtrip:"+member, "mg:score:high:roundtrip:"+member
	for _, path := range []struct {
		name, url string
		data      *redis.Client
	}{
		{"dump", f.target.URL(14), f.db(14)},
		{"acl-without-dump", fmt.Sprintf("redis://nodump:pw@%s/14", f.target.Addr), f.db(14)},
		{"embedded-demo", d.Connections()[0].URL + "/14", redis.NewClient(demoOpts)},
	} {
		t.Run(path.name, func(t *testing.T) {
			f.conn = f.open(path.url)
			f.conn.ForcePack(schema.BuiltinPack("eisland"))
			c := path.data
			c.Del(f.ctx, board, meta, high)
			c.ZAdd(f.ctx, board, redis.Z{Score: 5000, Member: member}, redis.Z{Score: 10, Member: "other"})
			c.HSet(f.ctx, meta, "score", "5000", "moves", "77")
			c.Expire(f.ctx, meta, time.Hour)
			c.Set(f.ctx, high, "5000", 50*time.Minute)
			want := map[string]string{}
			for _, k := range []string{board, meta, high} {
				want[k] = value(t, c, k)
			}
			f.mustRun(support, KindRemoveLeaderboardEntry, f.req(14, board, ArgMember, member))
			if c.ZScore(f.ctx, board, member).Err() != redis.Nil || c.Exists(f.ctx, meta, high).Val() != 0 {
				t.Fatal("entry not removed whole")
			}
			f.mustRun(admin, KindUndo, UndoRequest(f.last()))
			for k, w := range want {
				if got := value(t, c, k); got != w {
					t.Fatalf("%q after undo: %s, want %s", k, got, w)
				}
			}
			if ttl := c.PTTL(f.ctx, meta).Val(); ttl < 59*time.Minute || ttl > time.Hour {
				t.Fatalf("metadata TTL after undo %v", ttl)
			}
		})
	}
}
