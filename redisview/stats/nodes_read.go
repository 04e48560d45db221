package stats

import (
	"context"

	"github.com/keydeck/keydeck/redisview"
)

// readCluster fills ov from every node of a cluster: the nodes table, the
// server figures and keyspace summed over the primaries that answered.
func (r *OverviewReader) readCluster(ctx context.Context, ov *Overview) error {
	c := r.conn
	own := c.OwnCount()
	rep, err := redisview.ReadCluster(ctx, c, nodeTimeout)
	if err != nil && !redisview.IsConnErr(err) {
		return r.readPrimariesOnly(ctx, ov, redisview.Refusal("CLUSTER NODES", err))
	}
	if err != nil {
		return err
	}
	ov.At = r.now()
	notif := clusterNotifyFlags(ctx, c)
	cr := newClusterRead(ov, rep, r.nodeOps)
	r.nodeOps = map[string]nodeOps{}
	for i, n := range rep.Nodes {
		cr.node(n, cr.infos[i], r.nodeOps)
	}
	cs := &cr.cs
	for _, n := range cs.Nodes {
		if n.Failing() {
			name := n.Addr
			if name == "" {
				name = "node " + n.ID
			}
			cs.Failing = append(cs.Failing, name+": "+n.Problem())
		}
	}
	cs.Uneven = unevenSpread(cs.Nodes, cs.Assigned)
	ov.Cluster = cs

	ov.Server = sumServer(cr.primaryInfos, notif)
	ov.Server.Keyspace = c.Keyspace()
	ov.Server.Databases = 1
	r.clusterRates(ov, own.Done, cr)
	ov.KeyspaceSource = "INFO keyspace of every primary"
	if cov := cs.Covered(); cov != "" {
		ov.KeyspaceSource = "INFO keyspace of " + cov + " (the others did not answer)"
	}
	ov.DBs = keyspaceStatsOf(KeyspaceOf(cr.primaryTxts))
	return nil
}

// clusterRead gathers one read of a cluster's nodes.
type clusterRead struct {
	ov      *Overview
	cs      ClusterStats
	infos   []Info            // each node's INFO, nil when not read
	addrOf  map[string]string // node addresses by ID
	offsets map[string]int64  // primaries' master_repl_offset by ID
	prevOps map[string]nodeOps

	primaryInfos []Info
	primaryTxts  []string
	replicaReads int64
	totalDelta   float64 // commands the countable primaries ran since the last read
	opsOK        bool    // every countable primary's rate is known
}

func newClusterRead(ov *Overview, rep redisview.ClusterReport, prev map[string]nodeOps) *clusterRead {
	cr := &clusterRead{ov: ov, addrOf: map[string]string{}, offsets: map[string]int64{}, prevOps: prev, opsOK: true,
		infos: make([]Info, len(rep.Nodes))}
	cr.cs = ClusterStats{Assigned: rep.SlotsAssigned, Uncovered: redisview.ClusterSlots - rep.SlotsAssigned}
	if rep.State != "" {
		cr.cs.State = redisview.Some(rep.State)
	} else {
		cr.cs.State = redisview.None[string](rep.StateErr)
	}
	for i, n := range rep.Nodes {
		cr.addrOf[n.ID] = n.Addr
		if n.Info == "" {
			continue
		}
		cr.infos[i] = ParseInfo(n.Info)
		if v, ok := cr.infos[i].Int("master_repl_offset"); ok && n.Primary {
			cr.offsets[n.ID] = v
		}
	}
	return cr
}

// node adds one node's row (in: its INFO, nil when not read), noting its
// command counter in ops for the next read.
func (cr *clusterRead) node(n redisview.ClusterNode, in Info, ops map[string]nodeOps) {
	ns := NodeStats{ID: n.ID, Addr: n.Addr, Primary: n.Primary, PrimaryID: n.PrimaryID, PrimaryAddr: cr.addrOf[n.PrimaryID],
		Slots: n.Slots, SlotRanges: n.SlotRanges, Flags: n.Flags, Fail: n.Fail, PFail: n.PFail, LinkUp: n.LinkUp, Err: n.Err, Refused: n.Refused}
	countable := n.Primary && (n.Slots > 0 || !n.Fail)
	if countable {
		cr.cs.Primaries++
	}
	if in == nil {
		why := "not read"
		if n.Err != "" {
			why = n.Err
		}
		ns.Keys, ns.UsedMemory, ns.MaxMemory = redisview.None[int64](why), redisview.None[int64](why), redisview.None[int64](why)
		ns.Policy, ns.OpsPerSec = redisview.None[string](why), redisview.None[float64](why)
		ns.ReplOffset, ns.LagBytes, ns.IOAgo = redisview.None[int64](why), redisview.None[int64](why), redisview.None[int64](why)
		if countable {
			cr.opsOK = false
		}
		cr.cs.Nodes = append(cr.cs.Nodes, ns)
		return
	}
	if !n.Primary {
		cr.replicaReads++
	}
	ns.Keys = redisview.Some(in.Keyspace()[0].Keys)
	ns.UsedMemory = infoInt(in, "used_memory", "memory")
	ns.MaxMemory = infoInt(in, "maxmemory", "memory")
	ns.Policy = policyOf(in)
	ns.ReplOffset = infoInt(in, "master_repl_offset", "replication")
	cr.rate(&ns, in, countable, ops)
	if !n.Primary {
		cr.replication(&ns, in)
	}
	if countable {
		cr.cs.PrimariesRead++
		cr.primaryInfos = append(cr.primaryInfos, in)
		cr.primaryTxts = append(cr.primaryTxts, n.Info)
		cr.ov.Headroom = append(cr.ov.Headroom, Headroom{Addr: n.Addr, Policy: ns.Policy, Used: ns.UsedMemory, Max: ns.MaxMemory, Keys: ns.Keys})
	}
	cr.cs.Nodes = append(cr.cs.Nodes, ns)
}

// rate is a node's command rate since the previous read.
func (cr *clusterRead) rate(ns *NodeStats, in Info, countable bool, ops map[string]nodeOps) {
	at := cr.ov.At
	total, hasTotal := in.Int("total_commands_processed")
	prev, had := cr.prevOps[ns.ID]
	switch {
	case !hasTotal:
		ns.OpsPerSec = redisview.None[float64]("not in this node's INFO stats section")
	case !had || total < prev.total || !at.After(prev.at):
		ns.OpsPerSec = redisview.Pending[float64]("measuring…")
	default:
		d := float64(total - prev.total)
		ns.OpsPerSec = redisview.Some(d / at.Sub(prev.at).Seconds())
		if countable {
			cr.totalDelta += d
		}
	}
	if hasTotal {
		ops[ns.ID] = nodeOps{at: at, total: total}
	}
	if countable && !ns.OpsPerSec.OK {
		cr.opsOK = false
	}
}

// replication is a replica's link and lag behind its primary.
func (cr *clusterRead) replication(ns *NodeStats, in Info) {
	if st, ok := in.Get("master_link_status"); ok && st != "up" {
		ns.LinkDown = true
	}
	ns.IOAgo = infoInt(in, "master_last_io_seconds_ago", "replication")
	po, okP := cr.offsets[ns.PrimaryID]
	switch {
	case !ns.ReplOffset.OK:
		ns.LagBytes = redisview.None[int64](ns.ReplOffset.Why)
	case !okP:
		ns.LagBytes = redisview.None[int64]("its primary's offset was not read")
	default:
		ns.LagBytes = redisview.Some(max(0, po-ns.ReplOffset.V))
	}
}

// clusterRates are the primaries' commands since the last read, less
// Keydeck's own (counted for the whole cluster: the INFO it sent the
// replicas is taken out, though a few other reads may have gone to them).
func (r *OverviewReader) clusterRates(ov *Overview, ownDone int64, cr *clusterRead) {
	dt := ov.At.Sub(r.prevOps.at).Seconds()
	first := r.prevOps.at.IsZero() || dt <= 0
	prevOwn := r.prevOps.ownLo
	r.prevOps = opsPoint{at: ov.At, ownLo: ownDone, hasOwn: true}
	set := func(v redisview.Opt[float64]) {
		ov.Server.OpsPerSec, ov.Server.OwnOpsPerSec, ov.Server.TotalOpsPerSec = v, v, v
	}
	switch {
	case len(cr.primaryInfos) == 0:
		set(redisview.None[float64]("no primary answered"))
	case !cr.opsOK && !first:
		set(redisview.Pending[float64]("a primary did not answer"))
	case first:
		set(redisview.Pending[float64]("measuring…"))
	default:
		ownDelta := float64(ownDone-prevOwn) - float64(cr.replicaReads) // one INFO each
		ov.Server.TotalOpsPerSec = redisview.Some(cr.totalDelta / dt)
		ov.Server.OwnOpsPerSec = redisview.Some(max(0, ownDelta) / dt)
		ov.Server.OpsPerSec = redisview.Some(max(0, cr.totalDelta-ownDelta) / dt)
		ov.Server.OpsApprox = true
	}
}

// clusterNotifyFlags reads notify-keyspace-events from one node (the
// cluster client picks it), bounded like a node's INFO: a primary whose
// host drops packets must not hold the overview for the dial timeout
// times the retries.
func clusterNotifyFlags(ctx context.Context, c *redisview.Conn) redisview.Opt[string] {
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	return notificationFlags(c.Client().ConfigGet(ctx, "notify-keyspace-events"))
}
