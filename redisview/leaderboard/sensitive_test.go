package leaderboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A companion of a sensitive family is never read: a leaderboard whose
// metadata hashes are sensitive shows its rows without them, and a
// sensitive board is listed without its top member.
func TestLeaderboardSensitiveCompanions(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	pack, err := schema.Load("secret.yaml", []byte(`name: secret
families:
  - id: race
    db: 3
    pattern: "race:times:{track}"
    type: zset
    ttl: none
    domain: Race
    role: leaderboard
    params: {member: uid, meta: "race:meta:{track}:{uid}"}
  - id: race-meta
    db: 3
    pattern: "race:meta:{track:segment}:{uid}"
    type: hash
    ttl: none
    domain: Race
    role: leaderboard-meta
    sensitive: true
    params: {leaderboard: "race:times:{track}"}
  - id: vault
    db: 3
    pattern: "vault:board"
    type: zset
    ttl: none
    domain: Race
    role: leaderboard
    sensitive: true
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, script := range []bool{true, false} {
		url := rs.URL(3)
		if !script {
			if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "noscript", "on", ">pw", "~*", "+@all", "-@scripting").Err(); err != nil {
				t.Fatal(err)
			}
			url = "redis://noscript:pw@" + rs.Addr + "/3"
		}
		c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: url}, quiet())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.ForcePack(pack)
		db := rs.Client(3)
		db.ZAdd(ctx, "race:times:monza", redis.Z{Score: 81, Member: "17"})
		db.HSet(ctx, "race:meta:monza:17", "passport", "X123-SECRET")
		db.ZAdd(ctx, "vault:board", redis.Z{Score: 1, Member: "hidden-member"})
		w, err := leaderboard.Read(ctx, c, 3, "race:times:monza", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Entries) != 1 || w.Entries[0].Meta != nil || !strings.Contains(w.MetaWhy, "sensitive") {
			t.Fatalf("script %v: %+v", script, w)
		}
		list, _, err := leaderboard.List(ctx, c, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Key == "vault:board" && (s.HasTop || s.TopMember != "" || !s.Sensitive) {
				t.Fatalf("sensitive board summarized: %+v", s)
			}
		}
	}
}
