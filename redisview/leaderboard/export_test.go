package leaderboard

import (
	"context"

	"github.com/keydeck/keydeck/redisview"
)

// Test-only: what the black-box tests (package leaderboard_test) read
// through, not used by the console.

// List finds every key of every leaderboard family of the
// connection's pack (Scan, at most limit keys; truncated says
// more exist) and reads each one's size and top entry in one pipelined round
// trip (Summarize). Without a pack or a leaderboard family the
// list is empty; Families says why.
func List(ctx context.Context, c *redisview.Conn, limit int) ([]Summary, bool, error) {
	refs, truncated, err := Scan(ctx, c, limit)
	if err != nil {
		return nil, false, err
	}
	sums, err := Summarize(ctx, c, refs)
	if err != nil {
		return nil, false, err
	}
	return sums, truncated, nil
}

// ScriptStatus says how the connection reads leaderboard windows:
// "" while scripts work, else why it uses two pipelined round trips.
func ScriptStatus(c *redisview.Conn) string { return c.Scripts().Why() }

// HighScoreKey is member's cached best score key; false when there is none.
func (pl Plan) HighScoreKey(member string) (string, bool) {
	if pl.Params == nil || pl.Params.HighScore == nil || pl.Params.Member == "" || pl.Family == nil {
		return "", false
	}
	return pl.companion(pl.Params.HighScore, member)
}
