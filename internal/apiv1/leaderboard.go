package apiv1

import (
	"math"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/leaderboard"
)

// Leaderboard is a window of a leaderboard's entries, in its display
// order (highest score first unless the pack says otherwise).
type Leaderboard struct {
	Conn   string  `json:"conn"`
	DB     int     `json:"db"`
	Key    Name    `json:"key"`
	Family *string `json:"family" doc:"The pack's leaderboard family; null when the pack does not call the key a leaderboard."`
	Size   int64   `json:"size" doc:"Entries on the board (ZCARD)."`
	Order  string  `json:"order" enum:"desc,asc" doc:"desc: the highest score ranks first."`
	Start  int64   `json:"start" doc:"The 0-based offset of the first item."`
	List[LeaderboardEntry]
}

// LeaderboardEntry is one member's place.
type LeaderboardEntry struct {
	Rank   int64    `json:"rank" doc:"The member's place, 1 the top."`
	Member Name     `json:"member"`
	Score  *float64 `json:"score" doc:"Its score; null only when infinite (score_text)."`
	// ScoreText is +inf or -inf for an infinite score.
	ScoreText string `json:"score_text,omitempty" doc:"+inf or -inf for an infinite score."`
}

// LeaderboardOf maps a window (leaderboard.Read); next is the start of the
// following window, as a cursor, or null at the end.
func LeaderboardOf(conn string, w leaderboard.Window) Leaderboard {
	lb := Leaderboard{Conn: conn, DB: w.DB, Key: Name(w.Key), Size: w.Size, Order: "asc", Start: w.Start,
		List: List[LeaderboardEntry]{Items: make([]LeaderboardEntry, 0, len(w.Entries))}}
	if w.Family != "" {
		f := w.Family
		lb.Family = &f
	}
	if w.Desc {
		lb.Order = "desc"
	}
	for _, e := range w.Entries {
		it := LeaderboardEntry{Rank: e.Rank + 1, Member: Name(e.Member)}
		if math.IsInf(e.Score, 0) {
			it.ScoreText = strings.ToLower(strconv.FormatFloat(e.Score, 'g', -1, 64))
		} else {
			s := e.Score
			it.Score = &s
		}
		lb.Items = append(lb.Items, it)
	}
	if end := w.Start + int64(len(w.Entries)); len(w.Entries) > 0 && end < w.Size {
		next := strconv.FormatInt(end, 10)
		lb.Next = &next
	}
	return lb
}
