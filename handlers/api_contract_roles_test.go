package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Every role the seeds hold a key of (eIsland's, the gateway's,
// vertique's) answers get-key with its typed decoded state, and the
// answer validates against the OpenAPI document: the role's variant
// (DecodedTokenBucket …) with its state's schema (StateTokenBucket …),
// not a free-form object.
func TestAPIDecodedStateOfEveryRoleMatchesTheContract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type seed struct {
		pack string
		dbs  []int
		load func(rs *redistest.Server) error
	}
	seeds := []seed{
		{"eisland", allDBs(), func(rs *redistest.Server) error {
			return demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return rs.Client(db) }, time.Now())
		}},
		{"gateway", []int{0}, func(rs *redistest.Server) error { return demo.SeedGateway(ctx, rs.Client(0), time.Now()) }},
		{"vertique", []int{0}, func(rs *redistest.Server) error {
			return demo.SeedVertique(ctx, rs.Client(0), time.Now(), demo.DemoSecret)
		}},
	}
	seen := map[schema.Role]bool{}
	for _, s := range seeds {
		rs := redistest.Start(t)
		if err := s.load(rs); err != nil {
			t.Fatal(err)
		}
		f := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{{Name: "c", URL: rs.URL(0)}}, PackFor: map[string]string{"c": s.pack}}, nil).up(t)
		waitFor(t, "the pack is chosen", func() bool { return f.reg.All()[0].Pack() != nil })
		cls := f.reg.All()[0].Classifier()
		c := newAPIClient(t, f)
		k := newContract(t, c)
		// One key of each role with a reader, in each database.
		for _, db := range s.dbs {
			byRole := map[schema.Role]string{}
			var cur uint64
			for {
				keys, next, err := rs.Client(db).Scan(ctx, cur, "*", 1000).Result()
				if err != nil {
					t.Fatal(err)
				}
				sort.Strings(keys)
				for _, key := range keys {
					m, ok := cls.Match(db, key)
					if !ok || m.Family.Sensitive || !decode.Supported(m.Family.Role) || byRole[m.Family.Role] != "" {
						continue
					}
					if typ, _ := rs.Client(db).Type(ctx, key).Result(); m.Family.TypeViolation(typ) != "" {
						continue
					}
					byRole[m.Family.Role] = key
				}
				if cur = next; cur == 0 {
					break
				}
			}
			for role, key := range byRole {
				var got struct {
					Decoded *struct {
						Role  string
						Note  string
						Error string
						State map[string]any
					}
				}
				u := "/api/v1/connections/c/db/" + strconv.Itoa(db) + "/key" + q("key_b64", base64.RawURLEncoding.EncodeToString([]byte(key)))
				body := k.call(c, "GET /api/v1/connections/{conn}/db/{n}/key", u, nil, 200, &got)
				if got.Decoded == nil || got.Decoded.Role != string(role) || got.Decoded.Error != "" {
					t.Errorf("%s db%d %q (%s): decoded %s", s.pack, db, key, role, body)
					continue
				}
				if got.Decoded.State != nil {
					seen[role] = true
				}
			}
		}
	}
	var roles []string
	for r := range seen {
		roles = append(roles, string(r))
	}
	sort.Strings(roles)
	b, _ := json.Marshal(roles)
	t.Logf("roles decoded and validated: %s", b)
	// The seeds hold a key of every role with a reader (a seed that stops
	// holding one, or a role that stops decoding, shows here).
	for _, r := range decode.Roles() {
		if !seen[r] {
			t.Errorf("no seeded key of role %s was decoded and validated", r)
		}
	}
}

func allDBs() []int {
	out := make([]int, 16)
	for i := range out {
		out[i] = i
	}
	return out
}
