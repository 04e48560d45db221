package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Filter selects audit records, newest first.
type Filter struct {
	User   string // exact
	Action string // exact kind name
	Conn   string // exact
	Key    string // substring of any key the record names
	Since  time.Time
	Until  time.Time
	Limit  int    // records per page: default 50, at most 500
	Before string // cursor from a previous page: only older records
}

const (
	defaultLimit = 50
	maxLimit     = 500
	// scanBudget bounds one call's work however rare the filter's matches:
	// a page may then hold fewer than Limit records and a cursor to go on.
	scanBudget = 5000
)

// Read reads one page of the audit stream: newest first, with XREVRANGE …
// COUNT, never the whole stream. next is "" when there is nothing older;
// otherwise pass it as Filter.Before for the next page.
func (a *Audit) Read(ctx context.Context, f Filter) ([]Record, string, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	end := "+"
	if !f.Until.IsZero() {
		end = strconv.FormatInt(f.Until.UnixMilli(), 10) // every sequence within that millisecond
	}
	if f.Before != "" {
		if !validID(f.Before) {
			return nil, "", invalidf("cursor %q is not an audit record id", f.Before)
		}
		if f.Until.IsZero() || idBefore(f.Before, f.Until.UnixMilli()) {
			end = "(" + f.Before
		}
	}
	start := "-"
	if !f.Since.IsZero() {
		start = strconv.FormatInt(max(f.Since.UnixMilli(), 0), 10)
	}
	batch := int64(min(max(2*limit, 100), 1000))

	var out []Record
	scanned := 0
	for {
		msgs, err := a.client.XRevRangeN(ctx, a.stream, end, start, batch).Result()
		if err != nil {
			return nil, "", fmt.Errorf("%w: reading the audit log: %v", ErrAuditUnavailable, err)
		}
		for _, m := range msgs {
			scanned++
			r := parseRecord(m)
			if f.matches(r) {
				out = append(out, r)
				if len(out) == limit {
					return a.withClaims(ctx, out), m.ID, nil
				}
			}
		}
		if int64(len(msgs)) < batch {
			return a.withClaims(ctx, out), "", nil
		}
		last := msgs[len(msgs)-1].ID
		if scanned >= scanBudget {
			return a.withClaims(ctx, out), last, nil
		}
		end = "(" + last
	}
}

func (f Filter) matches(r Record) bool {
	if f.User != "" && r.User != f.User || f.Action != "" && r.Action != f.Action || f.Conn != "" && r.Conn != f.Conn {
		return false
	}
	if f.Key == "" {
		return true
	}
	for _, k := range r.Keys {
		if strings.Contains(k, f.Key) {
			return true
		}
	}
	return false
}

// idBefore reports whether stream id lies in an earlier millisecond than ms,
// i.e. whether it is the tighter upper bound.
func idBefore(id string, ms int64) bool {
	head, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(head, 10, 64)
	return n <= ms
}

// withClaims marks the successful outcomes that an undo has claimed, in
// one round trip, so the page can hide their undo button. A failure here
// leaves them unmarked; undo checks the claim itself anyway.
func (a *Audit) withClaims(ctx context.Context, recs []Record) []Record {
	cmds := map[int]*redis.StringCmd{}
	_, _ = a.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range recs {
			if r.Phase == PhaseOutcome && r.Outcome == OutcomeOK {
				cmds[i] = p.Get(ctx, a.claimKey(r.ID))
			}
		}
		return nil
	})
	for i, c := range cmds {
		if c.Err() == nil {
			recs[i].UndoneBy = c.Val()
		}
	}
	return recs
}
