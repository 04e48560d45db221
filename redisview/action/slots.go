package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = redisview.ClusterSlots

// ErrCrossSlot refuses, on a Redis Cluster, an action whose keys are in
// more than one hash slot: its WATCH and MULTI/EXEC would have to span
// nodes (or slots a reshard may move apart), which Redis cannot make
// atomic. It wraps ErrInvalid (a refusal, 400): nothing was written.
var ErrCrossSlot = fmt.Errorf("%w: keys in more than one cluster slot", ErrInvalid)

// Slot is the cluster hash slot of key (redisview.KeySlot).
func Slot(key string) int { return redisview.KeySlot(key) }

// SlotGroup is the keys of one slot, in the order the action names them.
type SlotGroup struct {
	Slot int
	Keys []string
}

// SlotGroups groups keys by their slot, the groups in the order their
// first key comes.
func SlotGroups(keys []string) []SlotGroup {
	var out []SlotGroup
	for _, k := range keys {
		s := Slot(k)
		i := slices.IndexFunc(out, func(g SlotGroup) bool { return g.Slot == s })
		if i < 0 {
			out = append(out, SlotGroup{Slot: s})
			i = len(out) - 1
		}
		out[i].Keys = append(out[i].Keys, k)
	}
	return out
}

// CrossSlot is nil when every key is in one slot, and otherwise
// ErrCrossSlot naming every key (escaped) with its slot, in the order the
// action names them.
func CrossSlot(keys []string) error {
	groups := SlotGroups(keys)
	if len(groups) <= 1 {
		return nil
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (slot %d)", quoteKey(k), Slot(k))
	}
	return fmt.Errorf("%w: on a Redis Cluster the keys of one action must share a slot (one WATCH and MULTI/EXEC on one node), and these %d keys are in %d slots: %s. Keys with the same {hash tag} share a slot. Nothing was changed",
		ErrCrossSlot, len(keys), len(groups), strings.Join(parts, ", "))
}

// slotKeys are every key an action's transaction reads under WATCH or
// writes: its keys and those its preparer watches.
func slotKeys(p Plan, keys []string) []string {
	if pp, ok := p.(preparer); ok {
		return append(slices.Clone(keys), pp.watched()...)
	}
	return keys
}

// checkSlots refuses, on a cluster connection, a plan whose keys span
// slots (see CrossSlot). A standalone or sentinel connection has one
// keyspace: any keys go.
func checkSlots(conn *redisview.Conn, p Plan, keys []string) error {
	if conn == nil || !conn.IsCluster() {
		return nil
	}
	return CrossSlot(slotKeys(p, keys))
}

// clusterRetry bounds how long an action's reads on a cluster are tried
// again while a node does not answer: after a failover the client's slot
// map names the dead primary until it is reloaded (go-redis reloads it
// every 10 s by itself; reloadSlots asks at once).
const clusterRetry = 10 * time.Second

// reloadSlots asks a cluster connection's client to reload its slot map
// (in the background); false on any other connection.
func reloadSlots(ctx context.Context, conn *redisview.Conn, db int) bool {
	cc, ok := conn.DB(db).(*redis.ClusterClient)
	if ok {
		cc.ReloadState(ctx)
	}
	return ok
}

// retryOnCluster runs f, and on a cluster connection runs it again, the
// slot map reloaded, while it fails for a node not reached (isUnreachable)
// and within clusterRetry: a key whose primary failed over is read on
// the promoted replica. f must not have written anything when it fails so.
func retryOnCluster(ctx context.Context, conn *redisview.Conn, db int, f func() error) error {
	err := f()
	if !isUnreachable(err) || !conn.IsCluster() {
		return err
	}
	deadline := time.Now().Add(clusterRetry)
	for isUnreachable(err) && time.Now().Before(deadline) && reloadSlots(ctx, conn, db) {
		t := time.NewTimer(lostPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		err = f()
	}
	return err
}
