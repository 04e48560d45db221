package apiv1

import (
	"math"
	"testing"

	"github.com/keydeck/keydeck/redisview/leaderboard"
)

// An infinite score is the text the contract documents, "+inf" or "-inf"
// (strconv wrote "+Inf"), with no number.
func TestInfiniteScoreIsDocumentedText(t *testing.T) {
	lb := LeaderboardOf("c", leaderboard.Window{Key: "b", Entries: []leaderboard.Entry{{Member: "a", Score: math.Inf(1)}, {Rank: 1, Member: "z", Score: math.Inf(-1)}}})
	if got := lb.Items[0]; got.ScoreText != "+inf" || got.Score != nil {
		t.Errorf("+Inf: %+v", got)
	}
	if got := lb.Items[1]; got.ScoreText != "-inf" || got.Score != nil {
		t.Errorf("-Inf: %+v", got)
	}
}
