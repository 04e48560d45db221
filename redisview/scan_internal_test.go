package redisview

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestPrimariesAreNodesNotAddresses: CLUSTER SLOTS may name distinct
// primaries by one address string (an unknown endpoint "?", hostnames
// that repeat across machines on one port), and go-redis may rewrite it
// anyway; a walk must still get one position per primary node.
func TestPrimariesAreNodesNotAddresses(t *testing.T) {
	ranges := []redis.ClusterSlot{
		{Start: 0, End: 5460, Nodes: []redis.ClusterNode{{ID: "aaaa", Addr: "?:6379"}}},
		{Start: 5461, End: 10922, Nodes: []redis.ClusterNode{{ID: "bbbb", Addr: "?:6379"}}},
		{Start: 10923, End: 16383, Nodes: []redis.ClusterNode{{ID: "cccc", Addr: "?:6379"}}},
	}
	ps := primariesOf(ranges)
	if len(ps) != 3 {
		t.Fatalf("%d primaries, want 3: %+v", len(ps), ps)
	}
	for i, want := range []struct {
		id    string
		first int
	}{{"aaaa", 0}, {"bbbb", 5461}, {"cccc", 10923}} {
		if ps[i].ID != want.id || ps[i].FirstSlot != want.first {
			t.Errorf("primary %d = %+v, want %s from slot %d", i, ps[i], want.id, want.first)
		}
	}
}

// TestClusterCursorCarriesItsOwner: a position names the node whose SCAN
// cursor it holds, and reads back; an older position without one parses
// (its shard restarts).
func TestClusterCursorCarriesItsOwner(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef01234567"
	c := formatClusterCursor([]clusterPos{{slot: 5461, owner: id, cursor: 7}, {slot: 0, owner: id, cursor: 12}})
	ps, err := parseClusterCursor(c)
	if err != nil || len(ps) != 2 || ps[0] != (clusterPos{0, id, 12}) || ps[1] != (clusterPos{5461, id, 7}) {
		t.Fatalf("%q read back as %+v, %v", c, ps, err)
	}
	if ps, err := parseClusterCursor("s0:12,s5461:0"); err != nil || ps[0].owner != "" || ps[0].cursor != 12 {
		t.Fatalf("an owner-less position: %+v, %v", ps, err)
	}
	for _, bad := range []string{"s0@:1", "s0@XYZ:1", "s0@" + id + "0:1", "s0@" + id, "s0@a.b:1"} {
		if _, err := parseClusterCursor(Cursor(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
