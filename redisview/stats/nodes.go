package stats

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
)

// NodeStats is one cluster node on the overview.
type NodeStats struct {
	ID      string
	Addr    string
	Primary bool
	// PrimaryAddr (PrimaryID when its address is not known) names a
	// replica's primary.
	PrimaryAddr, PrimaryID string
	Slots, SlotRanges      int
	Flags                  []string
	Fail, PFail, LinkUp    bool
	// Refused: the node refused INFO (ACL); it is up, its figures unknown.
	Refused bool
	// Err says why the node's INFO was not read; its figures are then
	// unknown.
	Err string

	Keys       redisview.Opt[int64]
	UsedMemory redisview.Opt[int64]
	MaxMemory  redisview.Opt[int64] // 0: no maxmemory set
	Policy     redisview.Opt[string]
	// OpsPerSec is every client's commands per second on this node since
	// the previous read, Keydeck's own included (they are counted for the
	// cluster as a whole, not per node).
	OpsPerSec  redisview.Opt[float64]
	ReplOffset redisview.Opt[int64]
	// LagBytes: how far a replica's replication offset is behind its
	// primary's (both as read now); LinkDown: the replica's link to its
	// primary is not up; IOAgo: seconds since it last heard from it.
	LagBytes redisview.Opt[int64]
	LinkDown bool
	IOAgo    redisview.Opt[int64]
}

// Failing reports a node that is flagged fail or pfail, whose cluster bus
// link is down, or that did not answer.
func (n NodeStats) Failing() bool {
	return n.Fail || n.PFail || !n.LinkUp || n.Err != "" && !n.Refused
}

// Problem says in words what is wrong with a failing node ("" when
// nothing is).
func (n NodeStats) Problem() string {
	var w []string
	switch {
	case n.Fail:
		w = append(w, "flagged fail")
	case n.PFail:
		w = append(w, "flagged pfail (not reachable from the node asked)")
	}
	if !n.LinkUp && !n.Fail {
		w = append(w, "cluster bus link disconnected")
	}
	if n.Err != "" && (len(w) > 0 || !n.Refused) {
		w = append(w, n.Err)
	}
	return strings.Join(w, "; ")
}

// ClusterStats is what the overview says of the cluster as a whole.
type ClusterStats struct {
	State     redisview.Opt[string] // cluster_state
	Assigned  int                   // slots some primary serves
	Uncovered int                   // 16384 − Assigned
	// Primaries: the primaries that hold slots (or should: not failed);
	// PrimariesRead of them answered, and the keyspace and server figures
	// sum those.
	Primaries, PrimariesRead int
	// Uneven says how the slots are spread unevenly ("" when they are not).
	Uneven string
	// Failing names each failing node with what is wrong.
	Failing []string
	Nodes   []NodeStats
	// Err says why the nodes could not be listed (CLUSTER NODES refused):
	// the figures then sum every primary's INFO, the nodes are not shown.
	Err string
}

// Covered says what the summed figures cover when some primary was not
// read ("" when every one was).
func (c ClusterStats) Covered() string {
	if c.PrimariesRead >= c.Primaries {
		return ""
	}
	return fmt.Sprintf("%d of %d primaries", c.PrimariesRead, c.Primaries)
}

// Headroom is one node's room before it evicts or refuses writes.
type Headroom struct {
	Addr   string // "" on a standalone server
	Policy redisview.Opt[string]
	Used   redisview.Opt[int64]
	Max    redisview.Opt[int64] // 0: no maxmemory set
	Keys   redisview.Opt[int64]
}

// Room is maxmemory − used; ok is false without a maxmemory or when
// either is unknown.
func (h Headroom) Room() (int64, bool) {
	if !h.Used.OK || !h.Max.OK || h.Max.V == 0 {
		return 0, false
	}
	return h.Max.V - h.Used.V, true
}

// nodeTimeout bounds each node's reads on the cluster overview.
const nodeTimeout = 1500 * time.Millisecond

// unevenShare: a primary whose slots differ from an even share by more
// than this fraction makes the spread uneven.
const unevenShare = 0.2

// nodeOps is a node's command counter at the previous read.
type nodeOps struct {
	at    time.Time
	total int64
}

// readPrimariesOnly serves a user refused CLUSTER NODES (ACL): the
// figures sum each primary's INFO (redisview.InfoEach), and the nodes
// panel says why it is empty.
func (r *OverviewReader) readPrimariesOnly(ctx context.Context, ov *Overview, why string) error {
	c := r.conn
	txts, err := redisview.InfoEach(ctx, c.Client())
	if err != nil {
		return err
	}
	ov.At = r.now()
	infos := make([]Info, len(txts))
	for i, t := range txts {
		infos[i] = ParseInfo(t)
		ov.Headroom = append(ov.Headroom, Headroom{Addr: fmt.Sprintf("primary %d", i+1), Policy: policyOf(infos[i]),
			Used: infoInt(infos[i], "used_memory", "memory"), Max: infoInt(infos[i], "maxmemory", "memory"), Keys: redisview.Some(infos[i].Keyspace()[0].Keys)})
	}
	ov.Cluster = &ClusterStats{Err: why, State: redisview.None[string](why), Primaries: len(txts), PrimariesRead: len(txts)}
	ov.Server = sumServer(infos, clusterNotifyFlags(ctx, c))
	ov.Server.Keyspace = c.Keyspace()
	ov.Server.Databases = 1
	const rates = "per-node rates need CLUSTER NODES"
	ov.Server.OpsPerSec, ov.Server.OwnOpsPerSec, ov.Server.TotalOpsPerSec = redisview.None[float64](rates), redisview.None[float64](rates), redisview.None[float64](rates)
	ov.KeyspaceSource = "INFO keyspace of every primary"
	ov.DBs = keyspaceStatsOf(KeyspaceOf(txts))
	return nil
}

// unevenSpread says how unevenly the primaries share the slots.
func unevenSpread(nodes []NodeStats, assigned int) string {
	var n, lo, hi int
	lo = math.MaxInt
	var loAddr, hiAddr string
	for _, x := range nodes {
		if !x.Primary || x.Slots == 0 && x.Fail {
			continue
		}
		n++
		if x.Slots < lo {
			lo, loAddr = x.Slots, x.Addr
		}
		if x.Slots > hi {
			hi, hiAddr = x.Slots, x.Addr
		}
	}
	if n < 2 || assigned == 0 {
		return ""
	}
	even := float64(assigned) / float64(n)
	if float64(hi) <= even*(1+unevenShare) && float64(lo) >= even*(1-unevenShare) {
		return ""
	}
	return fmt.Sprintf("%s serves %d slots and %s %d; an even share is %.0f", hiAddr, hi, loAddr, lo, even)
}

func infoInt(in Info, field, section string) redisview.Opt[int64] {
	if v, ok := in.Int(field); ok {
		return redisview.Some(v)
	}
	if in.Has(section) {
		return redisview.None[int64]("not in this server's INFO " + section + " section")
	}
	return redisview.None[int64]("this server's INFO has no " + section + " section")
}

// policyOf is INFO memory's maxmemory_policy (Redis ≥ 4).
func policyOf(in Info) redisview.Opt[string] {
	if v, ok := in.Get("maxmemory_policy"); ok {
		return redisview.Some(v)
	}
	return redisview.None[string]("not readable: this server's INFO has no maxmemory_policy")
}

// sumServer is the server figures of a cluster: the primaries' sums.
func sumServer(infos []Info, notif redisview.Opt[string]) ServerStats {
	s := ServerStats{Notifications: notif}
	if len(infos) == 0 {
		why := "no primary answered"
		s.Version, s.Mode = redisview.None[string](why), redisview.None[string](why)
		s.Uptime = redisview.None[time.Duration](why)
		s.UsedMemory, s.PeakMemory, s.MaxMemory = redisview.None[int64](why), redisview.None[int64](why), redisview.None[int64](why)
		s.Clients, s.Evicted, s.Expired = redisview.None[int64](why), redisview.None[int64](why), redisview.None[int64](why)
		s.HitRatio = redisview.None[float64](why)
		return s
	}
	sum := func(field, section string) redisview.Opt[int64] {
		var t int64
		for _, in := range infos {
			o := infoInt(in, field, section)
			if !o.OK {
				return o
			}
			t += o.V
		}
		return redisview.Some(t)
	}
	versions := map[string]bool{}
	for _, in := range infos {
		v, _ := in.Get("redis_version")
		versions[v] = true
	}
	if v, _ := infos[0].Get("redis_version"); len(versions) == 1 && v != "" {
		s.Version = redisview.Some(v)
	} else {
		s.Version = redisview.None[string]("the primaries run different versions")
	}
	s.Mode = redisview.Some("cluster")
	var up int64 = math.MaxInt64
	for _, in := range infos {
		if v, ok := in.Int("uptime_in_seconds"); ok {
			up = min(up, v)
		}
	}
	if up != math.MaxInt64 {
		s.Uptime = redisview.Some(time.Duration(up) * time.Second)
	} else {
		s.Uptime = redisview.None[time.Duration]("not in the primaries' INFO")
	}
	s.UsedMemory = sum("used_memory", "memory")
	s.PeakMemory = sum("used_memory_peak", "memory")
	s.MaxMemory = sum("maxmemory", "memory")
	for _, in := range infos {
		if v, ok := in.Int("maxmemory"); ok && v == 0 {
			s.MaxMemory = redisview.Some[int64](0) // one primary without a limit: no limit
		}
	}
	s.Clients = sum("connected_clients", "clients")
	s.Evicted = sum("evicted_keys", "stats")
	s.Expired = sum("expired_keys", "stats")
	hits, misses := sum("keyspace_hits", "stats"), sum("keyspace_misses", "stats")
	switch {
	case !hits.OK || !misses.OK:
		s.HitRatio = redisview.None[float64](hits.Why + misses.Why)
	case hits.V+misses.V == 0:
		s.HitRatio = redisview.Pending[float64]("no key lookups yet")
	default:
		s.Hits, s.Misses = hits.V, misses.V
		s.HitRatio = redisview.Some(float64(hits.V) / float64(hits.V+misses.V))
	}
	return s
}

// keyspaceStatsOf converts summed keyspace figures into per-database stats.
func keyspaceStatsOf(ks map[int]KeyspaceDB) []DBStats {
	var lines []string
	for idx, db := range ks {
		lines = append(lines, "db"+strconv.Itoa(idx)+":keys="+strconv.FormatInt(db.Keys, 10)+",expires="+strconv.FormatInt(db.Expires, 10)+",avg_ttl="+strconv.FormatInt(db.AvgTTL.Milliseconds(), 10))
	}
	return keyspaceStats(ParseInfo("# Keyspace\n" + strings.Join(lines, "\n")))
}
