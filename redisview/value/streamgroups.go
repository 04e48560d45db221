package value

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Bounds of a stream's consumer groups panel. The server answers XINFO
// GROUPS and XINFO CONSUMERS whole (they take no COUNT); groups and
// consumers are few in practice, and the panel keeps these many.
const (
	MaxGroups          = 16
	MaxGroupConsumers  = 20
	MaxPendingOldest   = 10
	MaxPendingConsumer = 20
	// A group with more consumers than this is not asked for them (XINFO
	// CONSUMERS, XPENDING's per-consumer summary): the server would
	// answer every one.
	MaxConsumersRead = 100
)

// StreamGroups is a stream's consumer groups. Group and consumer names and
// entry IDs only: no entry's fields are read, so a stream of a sensitive
// family shows its groups as any other.
type StreamGroups struct {
	Groups []StreamGroup
	More   int // groups left off
	Err    string
}

// StreamGroup is one XINFO GROUPS row, its consumers and pending entries.
type StreamGroup struct {
	Name          string
	Consumers     int64
	Pending       int64
	LastDelivered string
	// EntriesRead is unknown for a group created at $ (the server
	// answers nil) and before Redis 7.0.
	EntriesRead redisview.Opt[int64]
	// Lag is how many entries wait to be delivered; unknown (the server
	// cannot tell after deletions, or is older than 7.0) when !Lag.OK.
	Lag redisview.Opt[int64]
	// Skipped says why consumers and the per-consumer summary were not
	// read (too many consumers), or "".
	Skipped string

	ConsumerList  []StreamConsumer
	MoreConsumers int
	ConsumersErr  string

	Summary    PendingSummary
	Oldest     []PendingEntry
	PendingErr string
}

// StreamConsumer is one XINFO CONSUMERS row.
type StreamConsumer struct {
	Name     string
	Pending  int64
	Idle     time.Duration
	Inactive time.Duration // since its last successful read; -1 unknown (before 7.2)
}

// PendingSummary is XPENDING's summary form.
type PendingSummary struct {
	Count         int64
	Lower, Higher string
	PerConsumer   []ConsumerPending // at most MaxPendingConsumer, most first
	More          int
}

// ConsumerPending is one consumer's count in the summary.
type ConsumerPending struct {
	Name  string
	Count int64
}

// PendingEntry is one of the oldest pending entries.
type PendingEntry struct {
	ID         string
	Consumer   string
	Idle       time.Duration
	Deliveries int64
}

// ReadStreamGroups reads the groups of key in database db (XINFO GROUPS),
// then for each group kept its consumers, pending summary and oldest
// pending entries, in one more round trip.
func ReadStreamGroups(ctx context.Context, conn *redisview.Conn, db int, key string) StreamGroups {
	cl := conn.DB(db)
	// Raw: go-redis reads a nil entries-read as 0 and an absent lag (before
	// 7.0) as 0, both stated as facts they are not.
	raw, err := cl.Do(ctx, "xinfo", "groups", key).Slice()
	if err != nil {
		if redisview.IsConnErr(err) {
			return StreamGroups{Err: conn.WrapErr(redisview.ReadError("reading the consumer groups", err)).Error()}
		}
		return StreamGroups{Err: redisview.Refusal("XINFO GROUPS", err)}
	}
	gs := make([]StreamGroup, 0, len(raw))
	for _, r := range raw {
		gs = append(gs, groupOf(fields(r)))
	}
	var out StreamGroups
	if len(gs) > MaxGroups {
		out.More = len(gs) - MaxGroups
		gs = gs[:MaxGroups]
	}
	cons := make([]*redis.Cmd, len(gs))
	sums := make([]*redis.XPendingCmd, len(gs))
	olds := make([]*redis.XPendingExtCmd, len(gs))
	_, _ = cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, g := range gs {
			if g.Consumers <= MaxConsumersRead {
				// Raw: before Redis 7.2 a consumer has no "inactive",
				// which the typed reply cannot tell from 0.
				cons[i] = p.Do(ctx, "xinfo", "consumers", key, g.Name)
				sums[i] = p.XPending(ctx, key, g.Name)
			}
			olds[i] = p.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: MaxPendingOldest})
		}
		return nil
	})
	for i, sg := range gs {
		if cons[i] == nil {
			sg.Skipped = fmt.Sprintf("more than %d consumers: they and the pending count per consumer are not read (the server would list every one)", MaxConsumersRead)
		} else {
			groupConsumers(&sg, cons[i])
		}
		groupPending(&sg, sums[i], olds[i])
		out.Groups = append(out.Groups, sg)
	}
	return out
}

// groupOf reads one XINFO GROUPS row.
func groupOf(f map[string]any) StreamGroup {
	var g StreamGroup
	g.Name, _ = f["name"].(string)
	g.Consumers, _ = f["consumers"].(int64)
	g.Pending, _ = f["pending"].(int64)
	g.LastDelivered, _ = f["last-delivered-id"].(string)
	g.EntriesRead = redisview.None[int64]("unknown (the group was created at $, or the server is older than 7.0)")
	if n, ok := f["entries-read"].(int64); ok {
		g.EntriesRead = redisview.Some(n)
	}
	switch n, ok := f["lag"].(int64); {
	case ok && n >= 0:
		g.Lag = redisview.Some(n)
	case f["lag"] == nil && !hasField(f, "lag"):
		g.Lag = redisview.None[int64]("unknown (the server is older than 7.0)")
	default:
		g.Lag = redisview.None[int64]("unknown (the server cannot tell it after entries were deleted)")
	}
	return g
}

func hasField(f map[string]any, k string) bool { _, ok := f[k]; return ok }

func groupConsumers(sg *StreamGroup, cmd *redis.Cmd) {
	rows, err := cmd.Slice()
	if err != nil {
		sg.ConsumersErr = redisview.Refusal("XINFO CONSUMERS", err)
		return
	}
	if len(rows) > MaxGroupConsumers {
		sg.MoreConsumers = len(rows) - MaxGroupConsumers
		rows = rows[:MaxGroupConsumers]
	}
	for _, r := range rows {
		f := fields(r)
		c := StreamConsumer{Inactive: -1}
		c.Name, _ = f["name"].(string)
		if n, ok := f["pending"].(int64); ok {
			c.Pending = n
		}
		if n, ok := f["idle"].(int64); ok {
			c.Idle = time.Duration(n) * time.Millisecond
		}
		if n, ok := f["inactive"].(int64); ok && n >= 0 {
			c.Inactive = time.Duration(n) * time.Millisecond
		}
		sg.ConsumerList = append(sg.ConsumerList, c)
	}
}

// fields reads a reply of field-value pairs (RESP2) or a map (RESP3).
func fields(r any) map[string]any {
	out := map[string]any{}
	switch v := r.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			if k, ok := v[i].(string); ok {
				out[k] = v[i+1]
			}
		}
	case map[any]any:
		for k, val := range v {
			if ks, ok := k.(string); ok {
				out[ks] = val
			}
		}
	}
	return out
}

func groupPending(sg *StreamGroup, sum *redis.XPendingCmd, old *redis.XPendingExtCmd) {
	if sum == nil {
		sg.Summary = PendingSummary{Count: sg.Pending}
		oldest(sg, old)
		return
	}
	s, err := sum.Result()
	if err != nil {
		sg.PendingErr = redisview.Refusal("XPENDING", err)
		return
	}
	sg.Summary = PendingSummary{Count: s.Count, Lower: s.Lower, Higher: s.Higher}
	for name, n := range s.Consumers {
		sg.Summary.PerConsumer = append(sg.Summary.PerConsumer, ConsumerPending{Name: name, Count: n})
	}
	sortPending(sg.Summary.PerConsumer)
	if len(sg.Summary.PerConsumer) > MaxPendingConsumer {
		sg.Summary.More = len(sg.Summary.PerConsumer) - MaxPendingConsumer
		sg.Summary.PerConsumer = sg.Summary.PerConsumer[:MaxPendingConsumer]
	}
	oldest(sg, old)
}

func oldest(sg *StreamGroup, old *redis.XPendingExtCmd) {
	es, err := old.Result()
	if err != nil {
		sg.PendingErr = redisview.Refusal("XPENDING (oldest)", err)
		return
	}
	for _, e := range es {
		sg.Oldest = append(sg.Oldest, PendingEntry{ID: e.ID, Consumer: e.Consumer, Idle: e.Idle, Deliveries: e.RetryCount})
	}
}

// sortPending orders consumers by pending count, most first, then name.
func sortPending(cs []ConsumerPending) {
	slices.SortFunc(cs, func(a, b ConsumerPending) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}
