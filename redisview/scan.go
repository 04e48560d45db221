package redisview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrBadCursor is returned for a scan cursor Keydeck did not write, or
// one of another kind of deployment (a single server's on a cluster, a
// cluster's on a single server: an old link after a move). It is the
// request's fault, not a Redis failure.
var ErrBadCursor = errors.New("bad scan position")

// checkKind refuses a position of the other kind of deployment.
func checkKind(cur Cursor, cluster bool) error {
	if cur.Done() {
		return nil
	}
	_, single := cur.Uint64()
	switch {
	case cluster && single:
		return fmt.Errorf("%w: %q is a single server's position, and this connection is a Redis Cluster; start the walk again", ErrBadCursor, cur)
	case !cluster && !single:
		return fmt.Errorf("%w: %q is a Redis Cluster's position, and this connection is a single server; start the walk again", ErrBadCursor, cur)
	}
	return nil
}

// Cursor is a SCAN position over a whole connection. On one server it is
// SCAN's own cursor in decimal. On a cluster it holds one cursor per
// primary not finished yet, each named by the first slot its node served
// and the run_id of the process whose cursor it is ("s0@<run_id>:1234,…"):
// a node's cursor means nothing on another node, nor on a promoted
// replica or a restarted primary (a process's hash seed is its own), so
// one shared cursor cannot walk a cluster, and a shard whose process
// changed is walked again from 0 (keys repeat, none is skipped). CursorStart begins a walk; a step that
// returns CursorStart has finished it.
type Cursor string

// CursorStart is the first (and, returned, the last) position of a walk.
const CursorStart Cursor = "0"

// Done reports the position a finished walk returns (which also starts one).
func (c Cursor) Done() bool { return c == CursorStart || c == "" }

// CursorOf is a single server's SCAN cursor.
func CursorOf(n uint64) Cursor { return Cursor(strconv.FormatUint(n, 10)) }

// Uint64 is a single server's cursor as a number (false on a cluster's).
func (c Cursor) Uint64() (uint64, bool) {
	if c == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(string(c), 10, 64)
	return n, err == nil
}

// ParseCursor reads a Cursor's text ("" and "0" are the start).
func ParseCursor(s string) (Cursor, error) {
	c := Cursor(s)
	if c.Done() {
		return "", nil
	}
	if _, ok := c.Uint64(); ok {
		return c, nil
	}
	if _, err := parseClusterCursor(c); err != nil {
		return "", err
	}
	return c, nil
}

// ScanStep runs one SCAN page from cur: on one server, SCAN cur MATCH match
// COUNT count [TYPE typ]; on a cluster, the same on every primary not
// finished yet, in parallel, with count per node (the budget is per node).
// An empty match or typ is left out.
func ScanStep(ctx context.Context, c redis.Cmdable, cur Cursor, match string, count int64, typ string) ([]string, Cursor, error) {
	keys, next, _, err := ScanStepRestarts(ctx, c, cur, match, count, typ)
	return keys, next, err
}

// ScanStepRestarts is ScanStep, also saying whether this step walks a
// cluster shard again from its start after it had given keys (its primary
// failed over or restarted, two shards met on one node, or a finished
// node's slots moved): a caller that sums what a walk gives (a sweep's
// counts) starts its sums again rather than count those keys twice.
func ScanStepRestarts(ctx context.Context, c redis.Cmdable, cur Cursor, match string, count int64, typ string) ([]string, Cursor, bool, error) {
	cc, ok := c.(*redis.ClusterClient)
	if err := checkKind(cur, ok); err != nil {
		return nil, "", false, err
	}
	if !ok {
		n, _ := cur.Uint64()
		keys, next, err := scanOne(ctx, c, n, match, count, typ)
		return keys, CursorOf(next), false, err
	}
	return scanCluster(ctx, cc, cur, match, count, typ)
}

func scanOne(ctx context.Context, c redis.Cmdable, cur uint64, match string, count int64, typ string) ([]string, uint64, error) {
	if typ != "" {
		return c.ScanType(ctx, cur, match, count, typ).Result()
	}
	return c.Scan(ctx, cur, match, count).Result()
}

// clusterPos is one primary's place in a cluster walk.
type clusterPos struct {
	slot   int    // the first slot the node served: names its shard across failovers
	owner  string // the run_id of the process whose SCAN cursor this is ("": unknown, walk again)
	cursor uint64
}

func parseClusterCursor(cur Cursor) ([]clusterPos, error) {
	var out []clusterPos
	for _, part := range strings.Split(string(cur), ",") {
		s, n, ok := strings.Cut(part, ":")
		s, owner, owned := strings.Cut(s, "@")
		slot, err1 := strconv.Atoi(strings.TrimPrefix(s, "s"))
		c, err2 := strconv.ParseUint(n, 10, 64)
		if !ok || !strings.HasPrefix(s, "s") || err1 != nil || err2 != nil || slot < 0 || slot > 16383 ||
			owned && !validRunID(owner) {
			return nil, fmt.Errorf("%w %q", ErrBadCursor, cur)
		}
		out = append(out, clusterPos{slot, owner, c})
	}
	return out, nil
}

// validRunID: a run_id (as a node ID) is 40 lowercase hex digits.
func validRunID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func formatClusterCursor(ps []clusterPos) Cursor {
	if len(ps) == 0 {
		return CursorStart
	}
	slices.SortFunc(ps, func(a, b clusterPos) int { return a.slot - b.slot })
	parts := make([]string, len(ps))
	for i, p := range ps {
		owner := ""
		if p.owner != "" {
			owner = "@" + p.owner
		}
		parts[i] = "s" + strconv.Itoa(p.slot) + owner + ":" + strconv.FormatUint(p.cursor, 10)
	}
	return Cursor(strings.Join(parts, ","))
}

// Primary is one primary of a cluster as CLUSTER SLOTS names it now.
type Primary struct {
	ID        string // its node ID
	Addr      string // as CLUSTER SLOTS gives it (go-redis may dial another)
	FirstSlot int
	Slots     int // how many slots it serves
}

// Primaries lists a cluster's primaries in slot order (one CLUSTER SLOTS).
func Primaries(ctx context.Context, cc *redis.ClusterClient) ([]Primary, error) {
	ranges, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	return primariesOf(ranges), nil
}

// primariesOf groups slot ranges by their primary's node ID: an address
// string may be shared by distinct nodes (an unknown endpoint "?") and
// is not the one go-redis dials (it rewrites loopback hosts and TLS-only
// nodes' zero port).
func primariesOf(ranges []redis.ClusterSlot) []Primary {
	by := map[string]*Primary{}
	for _, r := range ranges {
		if len(r.Nodes) == 0 {
			continue
		}
		n := r.Nodes[0]
		id := n.ID
		if id == "" { // not given: the address is all there is
			id = "addr " + n.Addr
		}
		p := by[id]
		if p == nil {
			p = &Primary{ID: n.ID, Addr: n.Addr, FirstSlot: r.Start}
			by[id] = p
		}
		p.FirstSlot = min(p.FirstSlot, r.Start)
		p.Slots += int(r.End - r.Start + 1)
	}
	out := make([]Primary, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Primary) int { return a.FirstSlot - b.FirstSlot })
	return out
}

// scanCluster runs one step of a cluster walk. Each position goes to the
// node serving its slot in the client's own slot map (MasterForKey: no
// command; ForEachMaster would send CLUSTER SLOTS on every call), so a
// step sends one SCAN per primary not finished and nothing else (and,
// the first time it meets a process, a CLUSTER MYID and INFO server).
//
// A walk gives every key present for the whole walk at least once (some
// maybe twice): a position whose cursor another process gave (a promoted
// replica, a restarted primary: another run_id) starts that node again
// from 0, and so does one that answered a SCAN while it was being
// replaced; a node that serves the slots of two positions (a slot map
// that changed) is walked once, from 0; a node the client routes a slot
// to that the slot map does not name as its primary (either may be
// behind the cluster) is not scanned, and both maps are read again; a
// node's walk ends only if a slot map read then still names it (else the
// slots' new node walks them from its start).
func scanCluster(ctx context.Context, cc *redis.ClusterClient, cur Cursor, match string, count int64, typ string) ([]string, Cursor, bool, error) {
	st := stateOf(cc)
	ps, err := st.positions(ctx, cc, cur)
	if err != nil {
		return nil, "", false, err
	}
	ranges, err := st.slots(ctx, cc)
	if err != nil {
		return nil, "", false, err
	}
	w := &clusterStep{st: st, cc: cc, byID: map[string]*scanJob{}}
	w.plan(ctx, ps, ranges)
	w.scan(ctx, match, count, typ)
	w.confirmEnds(ctx)
	if w.doubt {
		st.doubt(ctx, cc) // the next step reads CLUSTER SLOTS again, the client its slot map
	}
	if len(w.errs) > 0 {
		return w.keys, formatClusterCursor(w.next), w.restarted, errors.Join(w.errs...)
	}
	return w.keys, formatClusterCursor(w.next), w.restarted, nil
}

// scanJob is one node's SCAN in a step.
type scanJob struct {
	pos  clusterPos
	node *redis.Client
	who  identity
}

// clusterStep is one step of a composite walk: a SCAN on each primary,
// in parallel, and the positions of the next step.
type clusterStep struct {
	st    *clusterState
	cc    *redis.ClusterClient
	jobs  []*scanJob
	byID  map[string]*scanJob
	next  []clusterPos
	errs  []error
	doubt bool
	// restarted: a shard that had given keys is walked again from its start.
	restarted bool

	mu      sync.Mutex
	keys    []string
	ended   []clusterPos // nodes whose walk ended this step
	endedID []string
}

// plan finds the node of each position; a position whose node is not
// known now is kept for the next step.
func (w *clusterStep) plan(ctx context.Context, ps []clusterPos, ranges []redis.ClusterSlot) {
	for _, p := range ps {
		node, err := w.cc.MasterForKey(ctx, keyForSlot(p.slot))
		var who identity
		if err == nil {
			who, err = w.st.identity(ctx, node)
		}
		if err == nil {
			if id, ok := slotOwner(ranges, p.slot); !ok || id != "" && id != who.id {
				err = fmt.Errorf("the client routes it to node %s, the slot map does not", who.id)
			}
		}
		if err != nil { // no node serves it now, or not the one the client knows (a failover): kept, retried
			w.next = append(w.next, p)
			w.errs = append(w.errs, fmt.Errorf("slot %d: %w", p.slot, err))
			w.doubt = true
			continue
		}
		if p.owner != who.run { // another process: its cursor means nothing there
			w.restarted = w.restarted || p.owner != "" || p.cursor != 0
			p.owner, p.cursor = who.run, 0
		}
		if j := w.byID[who.id]; j != nil {
			// Two positions on one node: it holds keys of both shards,
			// some behind either cursor. Walk it once, from its start.
			j.pos.slot, j.pos.cursor = min(j.pos.slot, p.slot), 0
			w.restarted = true
			continue
		}
		j := &scanJob{p, node, who}
		w.byID[who.id] = j
		w.jobs = append(w.jobs, j)
	}
}

// scan runs every planned node's SCAN in parallel.
func (w *clusterStep) scan(ctx context.Context, match string, count int64, typ string) {
	var wg sync.WaitGroup
	for _, j := range w.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, n, err := scanOne(ctx, j.node, j.pos.cursor, match, count, typ)
			var who identity
			if err == nil {
				who, err = w.st.answered(ctx, j.node, j.who)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if err != nil {
				w.st.forget(j.node) // ask again: it may come back as another process
				w.errs = append(w.errs, fmt.Errorf("node %s: %w", j.node.Options().Addr, err))
				w.next = append(w.next, j.pos)
				w.doubt = true
				return
			}
			w.keys = append(w.keys, got...)
			switch {
			case who.run != j.who.run: // replaced meanwhile: which one answered is not known
				w.next = append(w.next, clusterPos{j.pos.slot, who.run, 0})
				w.restarted = true
			case n != 0:
				w.next = append(w.next, clusterPos{j.pos.slot, j.pos.owner, n})
			default:
				w.ended = append(w.ended, j.pos)
				w.endedID = append(w.endedID, who.id)
			}
		}()
	}
	wg.Wait()
}

// confirmEnds: a node's walk ends only if it still serves the slot in a
// map read now: the one used may be behind (its slots and keys moved to
// another node, which then walks them from its start).
func (w *clusterStep) confirmEnds(ctx context.Context) {
	if len(w.ended) == 0 {
		return
	}
	fresh, err := w.st.reread(ctx, w.cc)
	for i, p := range w.ended {
		if id, ok := slotOwner(fresh, p.slot); err != nil || !ok || id != "" && id != w.endedID[i] {
			w.next = append(w.next, clusterPos{slot: p.slot})
			w.doubt, w.restarted = true, true
		}
	}
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("confirming the end of a node's walk: %w", err))
	}
}

// positions are the positions of a step from cur: at the start of a
// walk, one per primary of the slot map.
func (st *clusterState) positions(ctx context.Context, cc *redis.ClusterClient, cur Cursor) ([]clusterPos, error) {
	if !cur.Done() {
		return parseClusterCursor(cur)
	}
	ranges, err := st.slots(ctx, cc)
	if err != nil {
		return nil, err
	}
	var ps []clusterPos
	for _, p := range primariesOf(ranges) {
		ps = append(ps, clusterPos{slot: p.FirstSlot})
	}
	return ps, nil
}

// StepWidth is how many nodes a ScanStep from cur scans: one on a single
// server, each primary not finished yet on a cluster (a budget charges
// COUNT for each).
func StepWidth(ctx context.Context, c redis.Cmdable, cur Cursor) (int, error) {
	cc, ok := c.(*redis.ClusterClient)
	if err := checkKind(cur, ok); err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	ps, err := stateOf(cc).positions(ctx, cc, cur)
	if err != nil {
		return 0, err
	}
	return max(1, len(ps)), nil
}

// keyForSlot is a key that hashes to slot (CRC16 mod 16384, as Redis
// Cluster places keys), to ask the client which node serves the slot.
func keyForSlot(slot int) string {
	slotKeysOnce.Do(func() {
		left := len(slotKeys)
		for i := 0; left > 0; i++ {
			k := strconv.Itoa(i)
			if s := KeySlot(k); slotKeys[s] == "" {
				slotKeys[s] = k
				left--
			}
		}
	})
	return slotKeys[slot]
}

var (
	slotKeysOnce sync.Once
	slotKeys     [16384]string
)
