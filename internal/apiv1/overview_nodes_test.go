package apiv1

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// The overview's nodes, headroom and sentinel map to typed fields: an
// unreadable figure is absent (never 0), a failing node is named, an
// evicting policy is flagged for vertique's pack only, and the failover
// has its time.
func TestOverviewMapsNodesHeadroomSentinel(t *testing.T) {
	unread := redisview.None[int64]("not reachable: connection refused")
	ov := stats.Overview{Conn: "vt", At: t0, Status: up(),
		Cluster: &stats.ClusterStats{State: redisview.Some("ok"), Assigned: 16000, Uncovered: 384, Primaries: 2, PrimariesRead: 1,
			Failing: []string{"10.0.0.2:7000: flagged fail"},
			Nodes: []stats.NodeStats{
				{ID: "a", Addr: "10.0.0.1:7000", Primary: true, Slots: 8000, SlotRanges: 1, LinkUp: true, Flags: []string{"master"},
					Keys: redisview.Some[int64](5), UsedMemory: redisview.Some[int64](100), MaxMemory: redisview.Some[int64](0), Policy: redisview.Some("allkeys-lru")},
				{ID: "b", Addr: "10.0.0.2:7000", Primary: true, Slots: 8000, Fail: true, Err: "not reachable: connection refused", Keys: unread, UsedMemory: unread},
			}},
		Headroom: []stats.Headroom{{Addr: "10.0.0.1:7000", Policy: redisview.Some("allkeys-lru"), Used: redisview.Some[int64](100), Max: redisview.Some[int64](1000), Keys: redisview.Some[int64](5)}},
		Sentinel: &stats.SentinelStats{Master: "m", Primary: "10.0.0.9:6379", Sentinels: 3, Quorum: 2, CkQuorum: redisview.None[string]("SENTINEL CKQUORUM is not permitted"),
			LastFailover: &stats.Failover{At: t0, From: "10.0.0.8:6379", To: "10.0.0.9:6379"}},
	}
	for _, c := range []struct {
		pack string
		flag bool
	}{{"vertique", true}, {"eisland", false}} {
		p := Overview(ov, matched(pack(t, c.pack)), nil)
		if p.Nodes == nil || len(p.Nodes.Nodes) != 2 || p.Nodes.SlotsNotCovered != 384 || *p.Nodes.State != "ok" || len(p.Nodes.Failing) != 1 || p.Nodes.Covers != "1 of 2 primaries" {
			t.Fatalf("%s: nodes %+v", c.pack, p.Nodes)
		}
		dead := p.Nodes.Nodes[1]
		if !dead.Failing || dead.Keys != nil || dead.UsedMemory != nil || dead.Error == "" || dead.Role != "primary" || !strings.Contains(dead.Problem, "fail") {
			t.Errorf("%s: failed node %+v", c.pack, dead)
		}
		if len(p.Headroom) != 1 || p.Headroom[0].EvictsFlagged != c.flag || *p.Headroom[0].Headroom != 900 || *p.Headroom[0].Policy != "allkeys-lru" {
			t.Errorf("%s: headroom %+v", c.pack, p.Headroom)
		}
		s := p.Sentinel
		if s == nil || s.Primary != "10.0.0.9:6379" || s.CkQuorum != nil || s.CkQuorumWhy == "" || s.LastFailover == nil || !s.LastFailover.At.Equal(t0) || s.LastFailover.From != "10.0.0.8:6379" {
			t.Errorf("%s: sentinel %+v", c.pack, s)
		}
		b, err := json.Marshal(p)
		if err != nil || !strings.Contains(string(b), `"slots_not_covered":384`) || !strings.Contains(string(b), `"evicting_flagged":`) {
			t.Errorf("%s: JSON %s (%v)", c.pack, b, err)
		}
	}
}
