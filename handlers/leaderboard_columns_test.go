package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/route"
)

// The leaderboard's columns are titled as the pack labels them, its values
// shown by the meaning the pack gives them, and the score appears once.
func TestLeaderboardColumnsFromThePack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	db := f.redis.Client(14)
	db.ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 9000, Member: "ana"})
	db.HSet(ctx, "mg:score:user-meta:2048:ana", "score", 9000, "durationMs", 61500, "moves", 1234, "achievedAt", 1748736000123)
	code, _, body := get(t, f.srv.URL+route.Window{Conn: "main", DB: 14, Key: "mg:score:leaderboard:2048", N: 25}.URL())
	if code != http.StatusOK {
		t.Fatalf("status %d: %.300s", code, body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	doc.Find(`[data-testid="lb-meta-title"]`).Each(func(_ int, s *goquery.Selection) { titles = append(titles, s.Text()) })
	if strings.Join(titles, ",") != "Duration,Moves,Achieved" {
		t.Fatalf("metadata columns %q", titles)
	}
	scores := 0
	doc.Find(`thead th`).Each(func(_ int, s *goquery.Selection) {
		if strings.EqualFold(strings.TrimSpace(s.Text()), "score") {
			scores++
		}
	})
	if scores != 1 {
		t.Fatalf("%d score columns", scores)
	}
	var cells []string
	doc.Find(`[data-testid="lb-row"] td`).Each(func(_ int, s *goquery.Selection) { cells = append(cells, strings.TrimSpace(s.Text())) })
	row := strings.Join(cells, "|")
	for _, want := range []string{"|9,000|", "1m 1s", "1,234", "2025-"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	// Achieved is a time the browser shows in its own zone.
	if dt, _ := doc.Find(`[data-testid="lb-row"] td time[data-local]`).Attr("datetime"); dt != "2025-06-01T00:00:00Z" {
		t.Errorf("achieved <time datetime=%q>, want 2025-06-01T00:00:00Z", dt)
	}
}
