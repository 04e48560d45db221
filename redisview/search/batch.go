package search

import (
	"context"
	"sync"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// decodeReq is one key to read by its family's role.
type decodeReq struct {
	DB  int
	Key string
	M   schema.Match
}

// decoded is what a decoder read of one key.
type decoded = decode.Decoded

// decodeMany reads every key of reqs by its role at now: one
// decode.ReadMany per database, on that database's own client (no SELECT
// on db 0, which a least-privilege user may not send), the databases at
// once. A page's role reads cost the round trips of the deepest decoder
// (its phases), not one per command of each key.
func decodeMany(ctx context.Context, conn *redisview.Conn, reqs []decodeReq, now time.Time) []decoded {
	out := make([]decoded, len(reqs))
	byDB := map[int][]int{}
	for i, r := range reqs {
		byDB[r.DB] = append(byDB[r.DB], i)
	}
	pack := conn.Pack()
	var wg sync.WaitGroup
	for db, at := range byDB {
		wg.Go(func() {
			items := make([]decode.Item, len(at))
			for j, i := range at {
				items[j] = decode.Item{Match: reqs[i].M, Key: reqs[i].Key}
			}
			got := decode.ReadMany(ctx, conn.DB(db), decode.Env{Pack: pack, DB: db}, items, now)
			for j, i := range at {
				out[i] = got[j]
			}
		})
	}
	wg.Wait()
	return out
}
