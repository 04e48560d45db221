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

// ErrBadCursor is returned for a scan cursor Keydeck did not write.
var ErrBadCursor = errors.New("invalid scan cursor")

// Cursor is a SCAN position over a whole connection. On one server it is
// SCAN's own cursor in decimal. On a cluster it holds one cursor per
// primary not finished yet, each named by the first slot its node served
// ("s0:1234,s5461:0"): a node's cursor means nothing on another node, so
// one shared cursor cannot walk a cluster, and a promoted replica serves
// the same slots. CursorStart begins a walk; a step that returns
// CursorStart has finished it.
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
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		n, ok := cur.Uint64()
		if !ok {
			return nil, "", fmt.Errorf("%w %q", ErrBadCursor, cur)
		}
		keys, next, err := scanOne(ctx, c, n, match, count, typ)
		return keys, CursorOf(next), err
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
	slot   int // the first slot the node served: names it across failovers
	cursor uint64
}

func parseClusterCursor(cur Cursor) ([]clusterPos, error) {
	var out []clusterPos
	for _, part := range strings.Split(string(cur), ",") {
		s, n, ok := strings.Cut(part, ":")
		slot, err1 := strconv.Atoi(strings.TrimPrefix(s, "s"))
		c, err2 := strconv.ParseUint(n, 10, 64)
		if !ok || !strings.HasPrefix(s, "s") || err1 != nil || err2 != nil || slot < 0 || slot > 16383 {
			return nil, fmt.Errorf("%w %q", ErrBadCursor, cur)
		}
		out = append(out, clusterPos{slot, c})
	}
	return out, nil
}

func formatClusterCursor(ps []clusterPos) Cursor {
	if len(ps) == 0 {
		return CursorStart
	}
	slices.SortFunc(ps, func(a, b clusterPos) int { return a.slot - b.slot })
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = "s" + strconv.Itoa(p.slot) + ":" + strconv.FormatUint(p.cursor, 10)
	}
	return Cursor(strings.Join(parts, ","))
}

// Primary is one primary of a cluster as CLUSTER SLOTS names it now.
type Primary struct {
	Addr      string
	FirstSlot int
	Slots     int // how many slots it serves
}

// Primaries lists a cluster's primaries in slot order (one CLUSTER SLOTS).
func Primaries(ctx context.Context, cc *redis.ClusterClient) ([]Primary, error) {
	ranges, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	by := map[string]*Primary{}
	for _, r := range ranges {
		if len(r.Nodes) == 0 {
			continue
		}
		a := r.Nodes[0].Addr
		p := by[a]
		if p == nil {
			p = &Primary{Addr: a, FirstSlot: r.Start}
			by[a] = p
		}
		p.FirstSlot = min(p.FirstSlot, r.Start)
		p.Slots += int(r.End - r.Start + 1)
	}
	out := make([]Primary, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Primary) int { return a.FirstSlot - b.FirstSlot })
	return out, nil
}

// slotOwner is the primary serving slot.
func slotOwner(ranges []redis.ClusterSlot, slot int) string {
	for _, r := range ranges {
		if int(r.Start) <= slot && slot <= int(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr
		}
	}
	return ""
}

func scanCluster(ctx context.Context, cc *redis.ClusterClient, cur Cursor, match string, count int64, typ string) ([]string, Cursor, error) {
	ranges, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, "", err
	}
	// pending: the node serving each position's slot now, and where it is.
	pending := map[string]clusterPos{}
	if cur.Done() {
		prim, err := Primaries(ctx, cc)
		if err != nil {
			return nil, "", err
		}
		for _, p := range prim {
			pending[p.Addr] = clusterPos{slot: p.FirstSlot}
		}
	} else {
		ps, err := parseClusterCursor(cur)
		if err != nil {
			return nil, "", err
		}
		for _, p := range ps {
			a := slotOwner(ranges, p.slot)
			if _, dup := pending[a]; !dup {
				pending[a] = p // "" when no node serves it: kept, retried
			}
		}
	}
	var (
		mu   sync.Mutex
		keys []string
		errs []error
		next []clusterPos
		seen = map[string]bool{}
	)
	err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		addr := node.Options().Addr
		pos, ok := pending[addr]
		if !ok {
			return nil
		}
		got, n, err := scanOne(ctx, node, pos.cursor, match, count, typ)
		mu.Lock()
		defer mu.Unlock()
		seen[addr] = true
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", addr, err))
			next = append(next, pos)
			return nil
		}
		keys = append(keys, got...)
		if n != 0 {
			next = append(next, clusterPos{pos.slot, n})
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	// A position whose node the client does not list yet (a failover in
	// progress) stays where it was.
	for a, p := range pending {
		if !seen[a] {
			next = append(next, p)
		}
	}
	if len(errs) > 0 {
		return keys, formatClusterCursor(next), errors.Join(errs...)
	}
	return keys, formatClusterCursor(next), nil
}
