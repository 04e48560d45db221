package views

import (
	"strings"
	"testing"
)

// The ranks heading never reads "Ranks 1–0 of 0": a board that vanished
// says it is gone, a failed read that the ranks are unknown, a window past
// the end where the ranks stop.
func TestLeaderboardRanksHeading(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vm       LeaderboardVM
		heading  string
		testID   string
		notTitle string
	}{
		{"rows", LeaderboardVM{Size: "2", Rows: []LeaderboardRow{{Rank: "1", Member: "a"}, {Rank: "2", Member: "b"}}}, "Ranks 1–2 of 2", "lb-row", ""},
		{"gone", LeaderboardVM{Size: "0", Gone: true}, "Leaderboard gone", "lb-gone", "Ranks 1–0"},
		{"read failed", LeaderboardVM{Size: "0", Err: "Cannot read the leaderboard: refused"}, "Ranks unknown", "", "Ranks 1–0"},
		{"past the end", LeaderboardVM{Size: "30", Start: 50}, "No ranks from 51: 30 in all", "lb-empty", "Ranks 51–50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := render(t, LeaderboardLive(tc.vm, false))
			h := strings.Join(strings.Fields(d.Find(`[data-testid="lb-ranks"]`).Text()), " ")
			if h != tc.heading {
				t.Fatalf("heading %q, want %q", h, tc.heading)
			}
			if tc.testID != "" && d.Find(`[data-testid="`+tc.testID+`"]`).Length() == 0 {
				t.Fatalf("no %s", tc.testID)
			}
			if tc.notTitle != "" && strings.Contains(d.Text(), tc.notTitle) {
				t.Fatalf("says %q", tc.notTitle)
			}
		})
	}
}
