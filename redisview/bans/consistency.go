package bans

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Consistency is the check that every member of the exact set has all its
// bloom bits set. A member that has not is silently ignored by the
// application (the bloom says no, the set is never asked): the configured
// scheme differs from the application's, or the bloom was rewritten.
type Consistency struct {
	Checked  int64    // members checked in this pass so far
	Total    int64    // SCARD when the pass started (members come and go)
	Bad      int64    // members with a clear bit
	Examples []string // up to MaxExamples of them
	Complete bool     // the pass went over the whole set
	Started  time.Time
	Finished time.Time
}

// Check results of a Checker: the last complete pass and the one running.
type Status struct {
	Last    *Consistency // nil until a pass completed
	Current *Consistency // the pass in progress; nil between passes
}

// Inconsistent reports a mismatch found by the last complete pass or the
// running one. Ban and unban wait for a clean pass only when it is
// Widespread; otherwise only those of the members at fault do.
func (s Status) Inconsistent() bool {
	return s.Last != nil && s.Last.Bad > 0 || s.Current != nil && s.Current.Bad > 0
}

// Widespread reports a mismatch that indicts the scheme rather than a few
// members (see Consistency.Widespread), in the last complete pass: the
// first pages of a running pass may happen to hold the few members at
// fault.
func (s Status) Widespread() bool { return s.Last.Widespread() }

// Widespread: a complete pass found that most members lack a bit, among
// enough members to tell (see widespread). A member written to the set by
// hand without its bits is one among many; a scheme that is not the
// application's (bit count, hash count, hashing), or a bloom rewritten or
// lost, fails nearly every member (a member passes only by a false
// positive). Then nothing may be written with the pack's scheme; a few
// members lacking bits are fixed one by one (set-bloom-bits) while ban
// and unban of every other name go on.
func (c *Consistency) Widespread() bool {
	return c != nil && c.Complete && widespread(c.Bad, c.Checked)
}

// The least evidence that the scheme, not a few members, is at fault:
// members checked and members lacking bits. One name added by hand to a
// new ban list is 1 of 1; it must not stop every ban.
const (
	MinWidespreadChecked = 8
	MinWidespreadBad     = 3
)

// widespread: bad of checked members lacking bits is most of enough.
func widespread(bad, checked int64) bool {
	return checked >= MinWidespreadChecked && bad >= MinWidespreadBad && bad*2 > checked
}

// Known reports whether any verdict is known: a complete pass, or a
// mismatch already found.
func (s Status) Known() bool { return s.Last != nil || s.Inconsistent() }

// MaxExamples bounds the mismatched members a pass keeps.
const MaxExamples = 5

// Checker walks a set in bounded steps (SSCAN pages, then one GETBIT
// pipeline per page), one pass after another. It is safe for concurrent
// use; a live view steps it once per tick.
type Checker struct {
	mu     sync.Mutex
	list   List
	cursor uint64
	cur    *Consistency
	last   *Consistency
	// Every is the pause between the end of a pass and the next.
	Every time.Duration
	// MinGap is the least time between two steps that scan: every live
	// view of the list steps the one checker, and however many there
	// are, the set is walked at one pace.
	MinGap   time.Duration
	lastScan time.Time
}

// RecheckMismatch is the pause after a pass that found a mismatch.
const RecheckMismatch = 3 * time.Second

// ScanCount is the COUNT of one SSCAN of the check.
var ScanCount int64 = 250

var checkers sync.Map // checkerKey → *Checker

type checkerKey struct {
	conn *redisview.Conn
	id   string
}

// CheckerFor returns the process's checker of list l on conn (one per
// connection and list, shared by every viewer and by the actions).
func CheckerFor(conn *redisview.Conn, l List) *Checker {
	k := checkerKey{conn, l.ID}
	if c, ok := checkers.Load(k); ok {
		return c.(*Checker)
	}
	c, _ := checkers.LoadOrStore(k, &Checker{list: l, Every: 30 * time.Second, MinGap: 500 * time.Millisecond})
	return c.(*Checker)
}

// Status is the checker's state, copied.
func (k *Checker) Status() Status {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.statusLocked()
}

func (k *Checker) statusLocked() Status {
	var s Status
	if k.last != nil {
		c := *k.last
		c.Examples = slices.Clone(c.Examples)
		s.Last = &c
	}
	if k.cur != nil {
		c := *k.cur
		c.Examples = slices.Clone(c.Examples)
		s.Current = &c
	}
	return s
}

// Restart forgets what was found and starts a new pass at the next step
// (after a rebuild or a ban: the state it judged has changed).
func (k *Checker) Restart() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cur, k.last, k.cursor, k.lastScan = nil, nil, 0, time.Time{}
}

// Step checks up to pages SSCAN pages of members, starting a pass when
// none runs and the last ended Every ago. It returns the status after the
// step.
func (k *Checker) Step(ctx context.Context, c redis.Cmdable, now time.Time, pages int) (Status, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.lastScan.IsZero() && now.Sub(k.lastScan) >= 0 && now.Sub(k.lastScan) < k.MinGap {
		return k.statusLocked(), nil
	}
	if k.cur == nil {
		pause := k.Every
		if k.last != nil && k.last.Bad > 0 {
			// A mismatch is looked at again soon: a rebuild or a fixed
			// pack should clear the warning (and re-enable ban and unban)
			// within seconds.
			pause = min(pause, RecheckMismatch)
		}
		if k.last != nil && now.Sub(k.last.Finished) < pause {
			return k.statusLocked(), nil
		}
		total, err := c.SCard(ctx, k.list.SetKey).Result()
		if err != nil {
			return k.statusLocked(), redisview.ReadError("SCARD", err)
		}
		k.cur, k.cursor = &Consistency{Total: total, Started: now}, 0
	}
	k.lastScan = now
	for range max(pages, 1) {
		members, next, err := c.SScan(ctx, k.list.SetKey, k.cursor, "*", ScanCount).Result()
		if err != nil {
			return k.statusLocked(), redisview.ReadError("SSCAN", err)
		}
		bad, err := missing(ctx, c, k.list, members)
		if err != nil {
			return k.statusLocked(), err
		}
		k.cur.Checked += int64(len(members))
		k.cur.Bad += int64(len(bad))
		for _, m := range bad {
			if len(k.cur.Examples) < MaxExamples {
				k.cur.Examples = append(k.cur.Examples, m)
			}
		}
		k.cursor = next
		if next == 0 {
			k.cur.Complete, k.cur.Finished = true, now
			k.last, k.cur = k.cur, nil
			break
		}
	}
	return k.statusLocked(), nil
}

// missing returns the members with a clear bloom bit (one GETBIT pipeline).
func missing(ctx context.Context, c redis.Cmdable, l List, members []string) ([]string, error) {
	if len(members) == 0 {
		return nil, nil
	}
	pipe := c.Pipeline()
	cmds := make([][]*redis.IntCmd, len(members))
	for i, m := range members {
		for _, off := range l.Positions(m) {
			cmds[i] = append(cmds[i], pipe.GetBit(ctx, l.BloomKey, off))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisview.ReadError("GETBIT", err)
	}
	var bad []string
	for i, m := range members {
		for _, cmd := range cmds[i] {
			if cmd.Val() != 1 {
				bad = append(bad, m)
				break
			}
		}
	}
	return bad, nil
}

// SampleSize is how many members Sample draws.
const SampleSize = 20

// Sample draws up to n random members (SRANDMEMBER) and returns those with
// a clear bloom bit: a cheap guard that a wrong scheme (every member
// fails) cannot pass, for actions that must not run on a mismatched bloom.
func Sample(ctx context.Context, c redis.Cmdable, l List, n int) ([]string, error) {
	bad, _, err := sample(ctx, c, l, n)
	return bad, err
}

func sample(ctx context.Context, c redis.Cmdable, l List, n int) (bad []string, drawn int, err error) {
	members, err := c.SRandMemberN(ctx, l.SetKey, int64(n)).Result()
	if err != nil {
		return nil, 0, redisview.ReadError("SRANDMEMBER", err)
	}
	bad, err = missing(ctx, c, l, members)
	return bad, len(members), err
}

// Missing returns those of members (a page of the set, say) that have a
// clear bloom bit, in their order: one GETBIT pipeline.
func Missing(ctx context.Context, c redis.Cmdable, l List, members []string) ([]string, error) {
	return missing(ctx, c, l, members)
}

// Mismatch is what is known, before an action, of members lacking bits.
type Mismatch struct {
	Bad bool // some member lacks a bit
	// Widespread: most of enough do (see Consistency.Widespread): the
	// scheme is suspect, and nothing may be written with it.
	Widespread bool
	Examples   []string // a few of those at fault
}

// Judge says whether list l on conn is known not to match its set: from
// the checker's last complete pass when it found the mismatch widespread,
// else from a random sample drawn now (widespread only when it drew
// enough members, see widespread) together with what the checker found.
func Judge(ctx context.Context, conn *redisview.Conn, l List) (Mismatch, error) {
	st := CheckerFor(conn, l).Status()
	m := Mismatch{Bad: st.Inconsistent(), Widespread: st.Widespread()}
	if st.Current != nil {
		m.Examples = st.Current.Examples
	}
	if len(m.Examples) == 0 && st.Last != nil {
		m.Examples = st.Last.Examples
	}
	if m.Widespread {
		return m, nil
	}
	bad, drawn, err := sample(ctx, conn.DB(l.DB), l, SampleSize)
	if err != nil {
		return Mismatch{}, err
	}
	if len(bad) > 0 {
		m.Bad = true
		if len(m.Examples) == 0 {
			m.Examples = bad
		}
	}
	if widespread(int64(len(bad)), int64(drawn)) {
		m.Widespread, m.Examples = true, bad
	}
	return m, nil
}
