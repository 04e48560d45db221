package handlers

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A pack without rate-limit or lock families is told which roles would
// have made one, in the order the pages have always named them (each
// presenter's rank), not sorted by name: the presenter tables changed how
// the sentence is made, not what it says.
func TestEmptyTextsNameRolesInTheirOrder(t *testing.T) {
	t.Parallel()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: "redis://127.0.0.1:1/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.ForcePack(&schema.Pack{Name: "plain", Families: []*schema.Family{{ID: "page-cache", Role: schema.RoleCache}}})
	now := time.Now()
	if got, want := limitsVM(conn, limits.Snapshot{}, OpsTopic{Kind: limitsKind, Conn: "main"}, now).Empty,
		"No rate-limit family in this pack (plain): no family of role token-bucket, counter-window, sliding-window, bucket4j or counter with a limit."; got != want {
		t.Errorf("limits:\n got %q\nwant %q", got, want)
	}
	if got, want := locksVM(conn, limits.Snapshot{}, OpsTopic{Kind: locksKind, Conn: "main"}, now).Empty,
		"No lock family in this pack (plain): no family of role lock or cooldown."; got != want {
		t.Errorf("locks:\n got %q\nwant %q", got, want)
	}
}

// Each presenter of a list page has a rank of its own: a new role says
// where the page names it instead of landing by the spelling of its name.
func TestPresenterRanksAreDistinct(t *testing.T) {
	t.Parallel()
	check := func(table string, ranks map[schema.Role]int) {
		seen := map[int]schema.Role{}
		for r, n := range ranks {
			if n <= 0 {
				t.Errorf("%s: %s has no rank", table, r)
			}
			if o, dup := seen[n]; dup {
				t.Errorf("%s: %s and %s share rank %d", table, r, o, n)
			}
			seen[n] = r
		}
	}
	lim, lock := map[schema.Role]int{}, map[schema.Role]int{}
	for r, p := range limitPresenters {
		lim[r] = p.rank
	}
	for r, p := range lockPresenters {
		lock[r] = p.rank
	}
	check("limitPresenters", lim)
	check("lockPresenters", lock)
}
