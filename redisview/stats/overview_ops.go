package stats

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// opsPoint is what one read learnt of the command counters.
type opsPoint struct {
	at       time.Time
	total    int64 // total_commands_processed
	hasTotal bool
	// Keydeck's own count when the server read total: between ownLo and
	// ownHi (equal when the read had the server to itself).
	ownLo, ownHi    int64
	hasOwn          bool
	unsure, scripts int64 // Keydeck's counters of commands it could not count exactly
}

func (p opsPoint) ownMid() float64 { return float64(p.ownLo+p.ownHi) / 2 }

// opsStats fills the command rates of s: the server's total over the time
// since the previous read, Keydeck's own over the same interval (from the
// mark of the round trip that carried the INFO), and the applications'
// rate, their difference.
func (r *OverviewReader) opsStats(s *ServerStats, info Info, infoErr error, mark *redisview.OwnMark, now time.Time) {
	cur := opsPoint{at: now}
	cur.total, cur.hasTotal = info.Int("total_commands_processed")
	if mark.Marked() {
		cur.hasOwn = true
		cur.ownLo, cur.ownHi = mark.Before.Done, mark.After.Done+mark.After.InFlight
		if mark.Quiet {
			cur.ownLo = mark.After.Done
			cur.ownHi = cur.ownLo
		}
		cur.unsure, cur.scripts = mark.After.Unsure, mark.After.Scripts
	}
	inst, hasInst := info.Float("instantaneous_ops_per_sec")
	s.OpsEstimated = !hasInst
	prev := r.prevOps
	r.prevOps = cur
	dt := now.Sub(prev.at).Seconds()
	first := prev.at.IsZero() || dt <= 0

	const measuring = "measuring…"
	switch {
	case !cur.hasOwn:
		s.OwnOpsPerSec = redisview.None[float64]("Keydeck could not count its own commands in this read")
	case first || !prev.hasOwn:
		s.OwnOpsPerSec = redisview.Pending[float64](measuring)
	default:
		s.OwnOpsPerSec = redisview.Some(max(0, cur.ownMid()-prev.ownMid()) / dt)
	}
	approx := cur.hasOwn && prev.hasOwn &&
		(cur.ownHi != cur.ownLo || prev.ownHi != prev.ownLo || cur.unsure != prev.unsure || cur.scripts != prev.scripts)

	switch {
	case cur.hasTotal && (first || !prev.hasTotal || cur.total < prev.total):
		// Nothing to compare with yet, or the server restarted (or
		// CONFIG RESETSTAT): its counter began again.
		s.TotalOpsPerSec = redisview.Pending[float64](measuring)
		s.OpsPerSec = redisview.Pending[float64](measuring)
	case cur.hasTotal:
		delta := float64(cur.total - prev.total)
		s.TotalOpsPerSec = redisview.Some(delta / dt)
		if !s.OwnOpsPerSec.OK {
			s.OpsPerSec = redisview.None[float64]("Keydeck could not tell its own commands apart")
			break
		}
		app := delta - (cur.ownMid() - prev.ownMid())
		if app < 0 {
			// Keydeck counted more than the server did over the same
			// interval: the counters disagree; the applications ran
			// nothing Keydeck could tell apart.
			app, approx = 0, true
		}
		s.OpsPerSec = redisview.Some(app / dt)
		s.OpsApprox = approx
	case hasInst:
		// No total to subtract from: the server's own rate (its last
		// ~1.6 s) less Keydeck's over the last interval.
		s.TotalOpsPerSec = redisview.Some(inst)
		if s.OwnOpsPerSec.OK {
			s.OpsPerSec = redisview.Some(max(0, inst-s.OwnOpsPerSec.V))
			s.OpsApprox = true
		} else {
			s.OpsPerSec = redisview.Pending[float64](measuring)
		}
	default:
		why := "this server's INFO has no stats section"
		switch {
		case infoErr != nil:
			why = redisview.Refusal("INFO", infoErr)
		case info.Has("stats"):
			why = "not in this server's INFO stats section"
		}
		s.TotalOpsPerSec = redisview.None[float64](why)
		s.OpsPerSec = redisview.None[float64](why)
	}
}
