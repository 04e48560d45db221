package handlers

import (
	"testing"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
)

// The Ops/sec tile shows the applications' rate with Keydeck's own beside
// it, "≈" when the two counters could not be compared at one moment, and
// never "n/a" while the first interval is being measured.
func TestOpsTile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		s           stats.ServerStats
		value, hint string
		muted       bool
		unavailable int
	}{
		{"exact", stats.ServerStats{OpsPerSec: redisview.Some(12.0), OwnOpsPerSec: redisview.Some(480.0)}, "12.0", "Keydeck 480/s", false, 0},
		{"approximate", stats.ServerStats{OpsPerSec: redisview.Some(1500.0), OwnOpsPerSec: redisview.Some(9610.4), OpsApprox: true}, "≈ 1,500", "Keydeck 9,610/s", false, 0},
		{"idle", stats.ServerStats{OpsPerSec: redisview.Some(0.0), OwnOpsPerSec: redisview.Some(8.0)}, "0.0", "Keydeck 8.0/s", false, 0},
		{"first read", stats.ServerStats{OpsPerSec: redisview.Pending[float64]("measuring…"), OwnOpsPerSec: redisview.Pending[float64]("measuring…")}, "measuring…", "", false, 0},
		{"own not told apart", stats.ServerStats{OpsPerSec: redisview.None[float64]("Keydeck could not tell its own commands apart"), TotalOpsPerSec: redisview.Some(90.0)}, "90.0", "all clients, Keydeck's own included (Keydeck could not tell its own commands apart)", false, 0},
		{"refused", stats.ServerStats{OpsPerSec: redisview.None[float64]("INFO is not permitted for this Redis user (ACL)"), OwnOpsPerSec: redisview.Some(3.0), TotalOpsPerSec: redisview.None[float64]("INFO is not permitted for this Redis user (ACL)")}, "INFO is not permitted for this Redis user (ACL)", "", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vm views.OverviewVM
			tile := opsTile(tc.s, &vm)
			if tile.Value != tc.value || tile.Hint != tc.hint || tile.Muted != tc.muted || len(vm.Unavailable) != tc.unavailable {
				t.Fatalf("tile %+v, unavailable %q", tile, vm.Unavailable)
			}
		})
	}
}
