package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// ClusterNodes is a cluster's nodes on its overview.
type ClusterNodes struct {
	State           *string       `json:"cluster_state,omitempty" doc:"CLUSTER INFO's cluster_state of the first primary that answered; absent when none did (state_why)." example:"ok"`
	StateWhy        string        `json:"state_why,omitempty" doc:"Why cluster_state is absent."`
	SlotsAssigned   int           `json:"slots_assigned" minimum:"0" maximum:"16384" doc:"Hash slots some primary serves."`
	SlotsNotCovered int           `json:"slots_not_covered" minimum:"0" maximum:"16384" doc:"16384 minus slots_assigned."`
	Primaries       int           `json:"primaries" minimum:"0" doc:"Primaries that serve slots (or are not failed)."`
	PrimariesRead   int           `json:"primaries_read" minimum:"0" doc:"Of those, the ones that answered: server and keyspace sum these."`
	Covers          string        `json:"covers,omitempty" doc:"What the summed figures cover when a primary did not answer, e.g. '2 of 3 primaries'; absent when every one did."`
	UnevenSpread    string        `json:"uneven_spread,omitempty" doc:"How unevenly the primaries share the slots (a primary more than 20% off an even share); absent when even."`
	Failing         []string      `json:"failing" nullable:"false" doc:"Each failing node (flagged fail or pfail, bus link down, or not answering) with what is wrong."`
	Nodes           []ClusterNode `json:"nodes" nullable:"false" doc:"The primaries by first slot, each followed by its replicas."`
	Error           string        `json:"error,omitempty" doc:"Why the nodes cannot be listed (CLUSTER NODES refused): nodes is then empty, and server and keyspace sum every primary's INFO."`
}

// ClusterNode is one node of a cluster.
type ClusterNode struct {
	ID          string   `json:"id" doc:"The node id (40 hex digits)."`
	Addr        string   `json:"addr" doc:"host:port; empty when the cluster knows none." example:"10.0.0.1:7000"`
	Role        string   `json:"role" enum:"primary,replica" doc:"As CLUSTER NODES says (a failed primary stays a primary with no slots)."`
	PrimaryID   string   `json:"primary_id,omitempty" doc:"A replica's primary."`
	PrimaryAddr string   `json:"primary_addr,omitempty" doc:"A replica's primary's address."`
	Flags       []string `json:"flags" nullable:"false" doc:"CLUSTER NODES flags, 'myself' left out." example:"[\"master\"]"`
	Fail        bool     `json:"fail" doc:"The cluster agreed the node is down."`
	PFail       bool     `json:"pfail" doc:"The node asked cannot reach it (not agreed yet)."`
	LinkUp      bool     `json:"link_up" doc:"The cluster bus link to it is connected."`
	Failing     bool     `json:"failing" doc:"fail, pfail, link down, or not answering."`
	Problem     string   `json:"problem,omitempty" doc:"What is wrong with a failing node."`
	Slots       int      `json:"slots" minimum:"0" maximum:"16384"`
	SlotRanges  int      `json:"slot_ranges" minimum:"0"`
	Error       string   `json:"error,omitempty" doc:"Why the node's INFO was not read: its figures are then absent."`
	Keys        *int64   `json:"keys,omitempty" minimum:"0" doc:"Keys in database 0 (INFO keyspace)."`
	UsedMemory  *int64   `json:"used_memory_bytes,omitempty" minimum:"0"`
	MaxMemory   *int64   `json:"max_memory_bytes,omitempty" minimum:"0" doc:"0: no maxmemory set."`
	Policy      *string  `json:"maxmemory_policy,omitempty" example:"noeviction"`
	OpsPerSec   *float64 `json:"ops_per_sec,omitempty" minimum:"0" doc:"Every client's commands per second on this node since the previous read, Keydeck's own included."`
	ReplOffset  *int64   `json:"repl_offset,omitempty" doc:"master_repl_offset as the node reports it."`
	LagBytes    *int64   `json:"lag_bytes,omitempty" minimum:"0" doc:"A replica: how far its offset is behind its primary's."`
	LastIOSec   *int64   `json:"last_io_seconds_ago,omitempty" minimum:"0" doc:"A replica: seconds since it last heard from its primary."`
	LinkDown    bool     `json:"replica_link_down" doc:"A replica whose link to its primary is not up."`
}

// Headroom is one node's room before it evicts or refuses writes.
type Headroom struct {
	Node          string  `json:"node" doc:"The primary's address; empty on a standalone or sentinel connection (its one server)."`
	Policy        *string `json:"maxmemory_policy,omitempty" doc:"INFO memory's maxmemory_policy (CONFIG GET before Redis 4); absent when not readable (policy_why)." example:"noeviction"`
	PolicyWhy     string  `json:"policy_why,omitempty" doc:"Why the policy is not readable."`
	EvictsFlagged bool    `json:"evicting_flagged" doc:"The connection's pack needs a Redis that never evicts (vertique's Bucket4j buckets) and the policy is not noeviction."`
	UsedMemory    *int64  `json:"used_memory_bytes,omitempty" minimum:"0"`
	MaxMemory     *int64  `json:"max_memory_bytes,omitempty" minimum:"0" doc:"0: no maxmemory set."`
	Headroom      *int64  `json:"headroom_bytes,omitempty" doc:"max_memory_bytes minus used_memory_bytes; absent without a maxmemory."`
	Keys          *int64  `json:"keys,omitempty" minimum:"0"`
}

// SentinelState is a sentinel-managed primary.
type SentinelState struct {
	Master       string            `json:"master" doc:"The master name the sentinels watch." example:"mymaster"`
	Error        string            `json:"error,omitempty" doc:"Why no sentinel answered."`
	Asked        string            `json:"asked,omitempty" doc:"The sentinel that answered."`
	Unanswered   []string          `json:"unanswered" nullable:"false" doc:"Sentinels tried before it, with why."`
	Primary      string            `json:"primary,omitempty" doc:"The primary's address as the sentinel names it now."`
	PrimaryFlags string            `json:"primary_flags,omitempty" example:"master"`
	Quorum       int               `json:"quorum" minimum:"0"`
	Sentinels    int               `json:"sentinels" minimum:"0" doc:"Sentinels the asked one knows, itself included."`
	CkQuorum     *string           `json:"ckquorum,omitempty" doc:"SENTINEL CKQUORUM's answer; absent when refused (ckquorum_why)."`
	CkQuorumWhy  string            `json:"ckquorum_why,omitempty"`
	Replicas     []SentinelReplica `json:"replicas" nullable:"false"`
	LastFailover *Failover         `json:"last_failover,omitempty" doc:"The last change of primary Keydeck saw; absent when none since it started watching."`
}

// SentinelReplica is one replica of a sentinel-managed primary.
type SentinelReplica struct {
	Addr     string `json:"addr"`
	Flags    string `json:"flags" doc:"The sentinel's flags." example:"slave"`
	Link     string `json:"link,omitempty" doc:"Its link to the primary as the sentinel saw it (master-link-status)." example:"ok"`
	State    string `json:"state,omitempty" doc:"As the primary lists it; absent when it does not." example:"online"`
	LagBytes *int64 `json:"lag_bytes,omitempty" minimum:"0" doc:"How far its offset is behind the primary's."`
	LagSec   *int64 `json:"lag_seconds,omitempty" minimum:"0" doc:"Seconds since it last acknowledged (the primary's INFO)."`
}

// Failover is a change of primary Keydeck saw.
type Failover struct {
	At   time.Time `json:"at" doc:"When Keydeck first read the new primary."`
	From string    `json:"from"`
	To   string    `json:"to"`
}

func clusterNodes(cs *stats.ClusterStats) *ClusterNodes {
	if cs == nil {
		return nil
	}
	out := &ClusterNodes{State: opt(cs.State, "", nil), SlotsAssigned: cs.Assigned, SlotsNotCovered: cs.Uncovered,
		Primaries: cs.Primaries, PrimariesRead: cs.PrimariesRead, Covers: cs.Covered(), UnevenSpread: cs.Uneven,
		Failing: append([]string{}, cs.Failing...), Nodes: make([]ClusterNode, 0, len(cs.Nodes)), Error: cs.Err}
	if !cs.State.OK {
		out.StateWhy = cs.State.Why
	}
	for _, n := range cs.Nodes {
		role := "replica"
		if n.Primary {
			role = "primary"
		}
		out.Nodes = append(out.Nodes, ClusterNode{ID: n.ID, Addr: n.Addr, Role: role, PrimaryID: n.PrimaryID, PrimaryAddr: n.PrimaryAddr,
			Flags: append([]string{}, n.Flags...), Fail: n.Fail, PFail: n.PFail, LinkUp: n.LinkUp, Failing: n.Failing(), Problem: n.Problem(),
			Slots: n.Slots, SlotRanges: n.SlotRanges, Error: n.Err, Keys: opt(n.Keys, "", nil), UsedMemory: opt(n.UsedMemory, "", nil),
			MaxMemory: opt(n.MaxMemory, "", nil), Policy: opt(n.Policy, "", nil), OpsPerSec: opt(n.OpsPerSec, "", nil),
			ReplOffset: opt(n.ReplOffset, "", nil), LagBytes: opt(n.LagBytes, "", nil), LastIOSec: opt(n.IOAgo, "", nil), LinkDown: n.LinkDown})
	}
	return out
}

func headrooms(hs []stats.Headroom, pc redisview.PackChoice) []Headroom {
	strict := stats.NeedsNoEviction(pc)
	out := make([]Headroom, 0, len(hs))
	for _, h := range hs {
		x := Headroom{Node: h.Addr, Policy: opt(h.Policy, "", nil), EvictsFlagged: strict && h.Evicting(),
			UsedMemory: opt(h.Used, "", nil), MaxMemory: opt(h.Max, "", nil), Keys: opt(h.Keys, "", nil)}
		if !h.Policy.OK {
			x.PolicyWhy = h.Policy.Why
		}
		if room, ok := h.Room(); ok {
			x.Headroom = ptr(room)
		}
		out = append(out, x)
	}
	return out
}

func sentinelState(s *stats.SentinelStats) *SentinelState {
	if s == nil {
		return nil
	}
	out := &SentinelState{Master: s.Master, Error: s.Err, Asked: s.Asked, Unanswered: append([]string{}, s.Unanswered...),
		Primary: s.Primary, PrimaryFlags: s.PrimaryFlags, Quorum: s.Quorum, Sentinels: s.Sentinels,
		CkQuorum: opt(s.CkQuorum, "", nil), Replicas: make([]SentinelReplica, 0, len(s.Replicas))}
	if s.Err == "" && !s.CkQuorum.OK {
		out.CkQuorumWhy = s.CkQuorum.Why
	}
	for _, r := range s.Replicas {
		out.Replicas = append(out.Replicas, SentinelReplica{Addr: r.Addr, Flags: r.Flags, Link: r.Link, State: r.State,
			LagBytes: opt(r.LagBytes, "", nil), LagSec: opt(r.LagSec, "", nil)})
	}
	if f := s.LastFailover; f != nil {
		out.LastFailover = &Failover{At: Time(f.At), From: f.From, To: f.To}
	}
	return out
}
