package handlers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// clusterVM is the nodes table of a cluster's overview.
func clusterVM(cs *stats.ClusterStats) *views.ClusterVM {
	if cs == nil {
		return nil
	}
	if cs.Err != "" {
		return &views.ClusterVM{Err: cs.Err}
	}
	vm := &views.ClusterVM{
		Slots:   fmt.Sprintf("%s of %s slots assigned", format.Count(int64(cs.Assigned)), format.Count(redisview.ClusterSlots)),
		Uneven:  cs.Uneven,
		Failing: cs.Failing,
	}
	if cs.State.OK {
		vm.State, vm.StateBad = cs.State.V, cs.State.V != "ok"
	} else {
		vm.State, vm.StateBad = "unknown ("+cs.State.Why+")", true
	}
	if cs.Uncovered > 0 {
		vm.Uncovered = format.Plural(int64(cs.Uncovered), "slot", "slots") + " not covered by any primary"
	}
	if cov := cs.Covered(); cov != "" {
		vm.Covered = "Keys, memory and rates above cover " + cov + ": the others did not answer."
	}
	for _, n := range cs.Nodes {
		vm.Nodes = append(vm.Nodes, nodeRow(n))
	}
	return vm
}

func nodeRow(n stats.NodeStats) views.NodeRow {
	r := views.NodeRow{Addr: n.Addr, ID: n.ID, Flags: strings.Join(n.Flags, ","), Failing: n.Failing(), Problem: n.Problem()}
	if r.Addr == "" {
		r.Addr = "(no address)"
	}
	if len(n.ID) > 8 {
		r.ShortID = n.ID[:8]
	} else {
		r.ShortID = n.ID
	}
	switch {
	case n.Primary && n.Fail && n.Slots == 0:
		// Its slots went to a replica: it serves nothing now.
		r.Role, r.Slots = "failed primary", "0"
	case n.Primary:
		r.Role, r.Primary = "primary", true
		r.Slots = format.Count(int64(n.Slots))
		r.SlotsHint = format.Plural(int64(n.SlotRanges), "range", "ranges")
	default:
		of := n.PrimaryAddr
		if of == "" {
			of = n.PrimaryID
		}
		r.Role, r.Slots = "replica of "+of, "—"
	}
	r.Keys = optString(mapOpt(n.Keys, format.Count))
	r.Memory = optString(mapOpt(n.UsedMemory, format.Bytes))
	switch {
	case !n.MaxMemory.OK:
	case n.MaxMemory.V == 0:
		r.MemoryHint = "no maxmemory set"
	default:
		r.MemoryHint = "of " + format.Bytes(n.MaxMemory.V) + " maxmemory"
	}
	r.Ops = optString(mapOpt(n.OpsPerSec, format.Rate))
	r.Repl = optString(mapOpt(n.ReplOffset, func(v int64) string { return "offset " + strconv.FormatInt(v, 10) }))
	if !n.Primary {
		switch {
		case n.LinkDown:
			r.Lag, r.LagBad = "link to primary down", true
		case n.LagBytes.OK:
			r.Lag = format.Bytes(n.LagBytes.V) + " behind"
			if n.IOAgo.OK {
				r.Lag += ", heard " + format.Plural(n.IOAgo.V, "second", "seconds") + " ago"
			}
			r.LagBad = n.LagBytes.V > 0 && n.IOAgo.OK && n.IOAgo.V > 10
		default:
			r.Lag = optString(mapOpt(n.LagBytes, format.Bytes))
		}
	}
	r.Link = "connected"
	if !n.LinkUp {
		r.Link = "disconnected"
	}
	return r
}

// headroomVM is each primary's memory and keys before it evicts; a pack
// of Bucket4j buckets flags any policy but noeviction.
func headroomVM(hs []stats.Headroom, pc redisview.PackChoice) ([]views.HeadroomRow, string) {
	strict := stats.NeedsNoEviction(pc)
	var rows []views.HeadroomRow
	for _, h := range hs {
		row := views.HeadroomRow{Node: h.Addr, Keys: optString(mapOpt(h.Keys, format.Count))}
		if row.Node == "" {
			row.Node = "server"
		}
		switch {
		case h.Policy.OK:
			row.Policy = h.Policy.V
			if strict && h.Evicting() {
				row.PolicyBad = true
				row.PolicyWhy = "vertique needs a non-evicting Redis: under " + h.Policy.V + " a bucket may be evicted, and an evicted bucket comes back full"
			}
		case h.Policy.Pending:
			row.Policy = h.Policy.Why
		default:
			row.Policy, row.PolicyWhy = "not readable", h.Policy.Why
			if strict {
				row.PolicyWhy += " — whether it evicts vertique's buckets cannot be told"
			}
		}
		switch room, ok := h.Room(); {
		case ok:
			row.Room = format.Bytes(max(0, room)) + " free of " + format.Bytes(h.Max.V)
			row.RoomBad = room < h.Max.V/10
		case h.Max.OK && h.Max.V == 0:
			row.Room = "no maxmemory set"
			if h.Used.OK {
				row.Room += " (" + format.Bytes(h.Used.V) + " used)"
			}
		default:
			row.Room = "unknown (" + h.Max.Why + h.Used.Why + ")"
		}
		rows = append(rows, row)
	}
	note := ""
	if strict {
		note = "vertique's buckets need a Redis that never evicts (maxmemory-policy noeviction) and room to grow."
	}
	return rows, note
}

// sentinelVM is the primary, replicas and sentinels of a sentinel connection.
func sentinelVM(s *stats.SentinelStats) *views.SentinelVM {
	if s == nil {
		return nil
	}
	vm := &views.SentinelVM{Master: s.Master, Err: s.Err, Asked: s.Asked, Unanswered: s.Unanswered,
		Primary: s.Primary, PrimaryFlags: s.PrimaryFlags, PrimaryBad: strings.Contains(s.PrimaryFlags, "down")}
	if s.Err == "" {
		vm.Agree = fmt.Sprintf("%s known, quorum %d", format.Plural(int64(s.Sentinels), "sentinel", "sentinels"), s.Quorum)
		if s.CkQuorum.OK {
			vm.CkQuorum = s.CkQuorum.V
		} else {
			vm.CkQuorum, vm.CkQuorumBad = s.CkQuorum.Why, true
		}
	}
	for _, r := range s.Replicas {
		row := views.SentinelReplicaRow{Addr: r.Addr, Flags: r.Flags, Link: r.Link, State: r.State,
			Bad: strings.Contains(r.Flags, "down") || r.Link != "" && r.Link != "ok"}
		row.Lag = optString(mapOpt(r.LagBytes, format.Bytes))
		if r.LagSec.OK {
			row.Lag += ", acked " + format.Plural(r.LagSec.V, "second", "seconds") + " ago"
		}
		vm.Replicas = append(vm.Replicas, row)
	}
	if f := s.LastFailover; f != nil {
		vm.LastFailover = "from " + f.From + " to " + f.To + ", seen at " + format.Clock(f.At)
	} else {
		vm.LastFailover = "none seen since Keydeck started watching"
	}
	return vm
}
