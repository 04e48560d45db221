package stats

import (
	"context"
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// SentinelStats is what the overview of a sentinel connection says of its
// primary, replicas and sentinels.
type SentinelStats struct {
	Master string
	// Err says why no sentinel answered; the rest is then empty but
	// LastFailover.
	Err        string
	Asked      string   // the sentinel that answered
	Unanswered []string // the sentinels tried before it, with why
	Primary    string
	// PrimaryFlags are the sentinel's flags of the primary ("master",
	// "s_down,master" …).
	PrimaryFlags string
	Quorum       int
	Sentinels    int                   // sentinels the asked one knows, itself included
	CkQuorum     redisview.Opt[string] // SENTINEL CKQUORUM's answer
	Replicas     []SentinelReplica
	// LastFailover is the last time Keydeck saw the primary change (nil:
	// not since it started watching).
	LastFailover *Failover
}

// SentinelReplica is one replica of a sentinel-managed primary.
type SentinelReplica struct {
	Addr  string
	Flags string // the sentinel's
	Link  string // its link to the primary as the sentinel saw it
	State string // as the primary sees it ("online"); "" when not listed
	// LagBytes is how far its offset is behind the primary's; LagSec the
	// seconds since it last acknowledged (the primary's INFO).
	LagBytes redisview.Opt[int64]
	LagSec   redisview.Opt[int64]
}

// Failover is a change of primary Keydeck saw.
type Failover struct {
	At       time.Time // when Keydeck first read the new primary
	From, To string
}

// sentinelTimeout bounds each command of the sentinel read.
const sentinelTimeout = time.Second

// readSentinel fills ov.Sentinel, and remembers the primary to tell a
// failover at a later read.
func (r *OverviewReader) readSentinel(ctx context.Context, ov *Overview) {
	rep, err := redisview.ReadSentinel(ctx, r.conn, sentinelTimeout)
	s := &SentinelStats{Master: r.conn.Topology().Master, Unanswered: rep.Unanswered}
	ov.Sentinel = s
	if err != nil {
		s.Err = r.conn.SafeErr(err)
		s.LastFailover = r.failover
		return
	}
	s.Asked, s.Primary, s.PrimaryFlags, s.Quorum, s.Sentinels = rep.Asked, rep.Primary, rep.PrimaryFlags, rep.Quorum, rep.Sentinels
	if rep.CkQuorumErr != "" {
		s.CkQuorum = redisview.None[string](rep.CkQuorumErr)
	} else {
		s.CkQuorum = redisview.Some(rep.CkQuorum)
	}
	if r.primary != "" && rep.Primary != r.primary {
		r.failover = &Failover{At: r.now(), From: r.primary, To: rep.Primary}
	}
	r.primary = rep.Primary
	s.LastFailover = r.failover
	offset, hasOffset, lines := redisview.ParseReplicas(rep.PrimaryInfo)
	byAddr := map[string]redisview.ReplicaLag{}
	for _, l := range lines {
		byAddr[l.Addr] = l
	}
	why := "the primary's INFO replication was not read"
	if rep.PrimaryErr != "" {
		why += ": " + rep.PrimaryErr
	}
	for _, sr := range rep.Replicas {
		x := SentinelReplica{Addr: sr.Addr, Flags: sr.Flags, Link: sr.Link}
		l, listed := byAddr[sr.Addr]
		switch {
		case rep.PrimaryInfo == "":
			x.LagBytes, x.LagSec = redisview.None[int64](why), redisview.None[int64](why)
		case !listed:
			x.LagBytes = redisview.None[int64]("the primary does not list it as its replica")
			x.LagSec = x.LagBytes
		default:
			x.State = l.State
			if hasOffset {
				x.LagBytes = redisview.Some(max(0, offset-l.Offset))
			} else {
				x.LagBytes = redisview.None[int64]("the primary did not report master_repl_offset")
			}
			if l.LagSec >= 0 {
				x.LagSec = redisview.Some(l.LagSec)
			} else {
				x.LagSec = redisview.None[int64]("the primary did not report its lag")
			}
		}
		s.Replicas = append(s.Replicas, x)
	}
}
