package demo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// eIsland's mini games (DB 14).

// A mini game and the score distribution a leaderboard for it would show.
type game struct {
	ID      string
	Players int
	score   func(rng *rand.Rand) float64
}

var games = []game{
	{"2048", 200, func(r *rand.Rand) float64 { return float64(500 + int(r.ExpFloat64()*9000)) }},
	{"snake", 150, func(r *rand.Rand) float64 { return float64(10 + r.IntN(440)) }},
	{"tetris", 90, func(r *rand.Rand) float64 { return float64(100 * (10 + int(r.ExpFloat64()*900))) }},
	{"flappy", 35, func(r *rand.Rand) float64 { return float64(r.IntN(260)) }},
}

// LeaderboardSize is how many entries ZREMRANGEBYRANK keeps.
const LeaderboardSize = 200

func userMeta(rng *rand.Rand, score float64, at time.Time) []any {
	return []any{"score", int64(score), "durationMs", 20_000 + rng.Int64N(3_600_000),
		"moves", 50 + rng.IntN(4000), "achievedAt", at.UnixMilli()}
}

// DB 14: leaderboards and their satellites.
func seedMiniGame(s *seeder) {
	for gi, g := range games {
		players := s.some(g.Players)
		if gi == 0 {
			// the hostile names sit on the busiest board, where the console
			// renders them most often
			players = append(slices.Clone(hostileUsers), slices.DeleteFunc(players, func(u string) bool {
				return slices.Contains(hostileUsers, u)
			})...)[:g.Players]
		}
		for i, u := range players {
			score := g.score(s.rng)
			s.p.ZAdd(s.ctx, "mg:score:leaderboard:"+g.ID, redisZ(score, u))
			if i%5 < 3 {
				at := s.ago(time.Hour)
				s.p.HSet(s.ctx, "mg:score:user-meta:"+g.ID+":"+u, userMeta(s.rng, score, at)...)
				s.p.PExpire(s.ctx, "mg:score:user-meta:"+g.ID+":"+u, remaining(time.Hour, s.now.Sub(at)))
				s.set("mg:score:high:"+g.ID+":"+u, int64(score), remaining(time.Hour, s.now.Sub(at)))
			}
		}
	}
	for range 90 {
		id := uuid(s.rng)
		ttl := s.left(24 * time.Hour)
		s.set("mg:score:idempotency:"+id, "1", ttl)
		s.set("mg:score:consume:idempotency:"+id, "1", ttl)
	}
	for _, u := range s.some(3) {
		s.set("mg:score:lock:"+pick(s.rng, games).ID+":"+u, "1", s.held(10*time.Second))
	}
	for _, u := range s.some(24) {
		s.set("mg:score:submit:rate:"+pick(s.rng, games).ID+":"+u, 1+s.rng.IntN(10), s.left(60*time.Second))
	}
	for _, u := range s.some(12) {
		s.set("mg:score:leaderboard:refresh:rate:"+pick(s.rng, games).ID+":"+u, 1+s.rng.IntN(8), s.left(60*time.Second))
	}
	for _, u := range s.some(26) {
		s.set(sessionEntry(s.rng, u, s.ago(6*time.Hour), s.now))
	}
}

// sessionEntry is a 2048 session: the random seed and its start time, so the
// server can replay the game for anti-cheat checks.
func sessionEntry(rng *rand.Rand, user string, started, now time.Time) (string, any, time.Duration) {
	key := "mg:score:session:2048:" + user + ":" + hexString(rng, 16)
	return key, fmt.Sprintf("%d:%d", rng.Int64(), started.UnixMilli()), remaining(6*time.Hour, now.Sub(started))
}
